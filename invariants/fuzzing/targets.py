"""The fuzz targets HypoFuzz collects: one state-machine TestCase per selected invariant.

`hypothesis fuzz -- <this file>` imports this module in the hub and in every worker. The
selection (adapter or mutant, invariants, database SPEC) comes from the environment
(`invariants.fuzzing.config`). The `fuzz` profile is loaded with the session's database
before the TestCases are made, because HypoFuzz fuzzes only tests whose database is the
default one, and a derandomized profile would be skipped.
"""

from __future__ import annotations

import os

from hypothesis import settings

from invariants.dynamic.database import open_database
from invariants.dynamic.profiles import FUZZ, profile
from invariants.fuzzing.config import FuzzConfig
from invariants.fuzzing.selection import build_machines, target_name

SESSION_PROFILE = "harness-fuzz-session"

_config = FuzzConfig.from_environ(os.environ)
settings.register_profile(
    SESSION_PROFILE, settings(profile(FUZZ), database=open_database(_config.database))
)
settings.load_profile(SESSION_PROFILE)

for _check_id, _machine in build_machines(_config).items():
    globals()[target_name(_check_id)] = _machine.TestCase
