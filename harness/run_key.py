"""The stash key of a run's state, apart so the plugin can test for it without importing it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from harness.run_state import HarnessRun

RUN_KEY: pytest.StashKey[HarnessRun] = pytest.StashKey()
