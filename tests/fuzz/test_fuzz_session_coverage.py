"""Real sessions (directory database): a time box too short for the tests it holds exits 3
naming each test that never ran; a short 2-worker session over all seven invariants gives every
one of them examples, and HypoFuzz's coverage guidance keeps behaviours for them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("hypofuzz", reason="needs the fuzz extra: pip install -e '.[fuzz]'")

from invariants.checks import CHECK_IDS
from invariants.fuzzing.run import EXIT_NOTHING_FOUND, EXIT_SHORTFALL

pytestmark = [pytest.mark.fuzz_session, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
HANG_GUARD = 600  # seconds: only stops a hung subprocess, never judges speed


def _session(work: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    summary = work / "summary.json"
    result = subprocess.run(
        [sys.executable, "-m", "harness", "fuzz", "--database", str(work / "db"),
         "--json", str(summary), *args],
        cwd=work, env=env, capture_output=True, text=True, timeout=HANG_GUARD, check=False,
    )
    return result, json.loads(summary.read_text(encoding="utf-8"))


def test_a_box_too_short_to_reach_a_test_exits_3_and_says_why(tmp_path: Path) -> None:
    # The box starts after start-up (each worker's first example), so a 0.6 s box reaches
    # the first test; seven tests on one worker leave the others no time at all.
    result, summary = _session(tmp_path, "--minutes", "0.01", "--workers", "1")
    assert result.returncode == EXIT_SHORTFALL, result.stdout + result.stderr
    assert summary["exit_code"] == EXIT_SHORTFALL
    never = [check for check, test in summary["tests"].items() if not test["ran"]]
    assert never and [s["check"] for s in summary["shortfalls"]] == never
    for check in never:
        assert f"{check} never ran: a 0.01-minute box on 1 worker(s) gives each of 7 test(s)" in (
            result.stdout
        )


def test_a_short_session_reaches_every_invariant(tmp_path: Path) -> None:
    result, summary = _session(tmp_path, "--minutes", "0.3", "--workers", "2")
    assert result.returncode == EXIT_NOTHING_FOUND, result.stdout + result.stderr
    tests = summary["tests"]
    assert list(tests) == list(CHECK_IDS)
    assert all(t["ran"] and t["examples"] > 0 for t in tests.values()), tests
    # The re-executions replay the same programs, so HypoFuzz's corpus keeps behaviours
    # (before the replay fix every count stayed 0). Not asked of every test: an input's
    # are kept only after its re-execution, and on a loaded machine a test may get only
    # one or two examples in this box.
    assert max(t["behaviours"] for t in tests.values()) > 0, tests
    assert max(t["fingerprints"] for t in tests.values()) > 0, tests
