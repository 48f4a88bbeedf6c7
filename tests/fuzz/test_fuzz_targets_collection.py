"""HypoFuzz collects exactly the selected machines from the fuzz target module.

HypoFuzz silently skips a test whose settings are derandomized or whose database is not
the default one; these tests run HypoFuzz's own collection (in a fresh interpreter: the
target module configures Hypothesis globally) and require every selected machine to be a
fuzz target and nothing to be skipped.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("hypofuzz", reason="needs the fuzz extra: pip install -e '.[fuzz]'")

from invariants.fuzzing.config import FuzzConfig
from invariants.fuzzing.session import INI_NAME, SessionPlan, hypofuzz_command, prepare

COLLECT = """
import json, sys
from hypofuzz import detection
detection._in_hypofuzz_run = True
import hypofuzz.entrypoint  # registers HypoFuzz's provider, as `hypothesis fuzz` does
from hypofuzz.collection import collect_tests
result = collect_tests(sys.argv[1:])
print(json.dumps({"targets": [t.nodeid for t in result.fuzz_targets],
                  "skipped": {k: v.get("status_reason") for k, v in result.not_collected.items()}}))
"""


def _collect(config: FuzzConfig, session: Path) -> subprocess.CompletedProcess[str]:
    prepare(session)
    command = hypofuzz_command(SessionPlan(config, workers=1, seconds=1.0), session)
    pytest_args = command[command.index("--") + 1 :]
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_")}
    env.update(config.to_environ())
    return subprocess.run([sys.executable, "-c", COLLECT, *pytest_args], cwd=session, env=env,
                          capture_output=True, text=True, check=False)


def test_every_selected_machine_is_a_fuzz_target(tmp_path: Path) -> None:
    config = FuzzConfig(invariants=("INV4", "INV7"), database=str(tmp_path / "db"))
    result = _collect(config, tmp_path / "session")
    assert result.returncode == 0, result.stdout + result.stderr
    collected = json.loads(result.stdout.strip().splitlines()[-1])
    assert collected == {
        "targets": ["targets.py::TestINV4::runTest", "targets.py::TestINV7::runTest"],
        "skipped": {},
    }
    assert (tmp_path / "session" / INI_NAME).exists()


def test_a_bad_selection_fails_collection(tmp_path: Path) -> None:
    config = FuzzConfig(invariants=("INV4",), database=str(tmp_path / "db"))
    session = tmp_path / "session"
    prepare(session)
    command = hypofuzz_command(SessionPlan(config, workers=1, seconds=1.0), session)
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_")}
    env.update(config.to_environ() | {"HARNESS_FUZZ_INVARIANTS": "INV9"})
    result = subprocess.run([sys.executable, "-c", COLLECT, *command[command.index("--") + 1 :]],
                            cwd=session, env=env, capture_output=True, text=True, check=False)
    assert result.returncode != 0
    assert "unknown invariant 'INV9'" in result.stdout + result.stderr
