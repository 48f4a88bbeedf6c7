"""Real HypoFuzz sessions sharing a Redis example database, and CI replaying what they saved.

- Against mutant M2 (delivery retries re-send timed-out calls), a 2-worker session finds
  the INV4 failure, shrinks it and saves it in Redis; it exits 1.
- `pytest -p harness` in the `ci` profile, with that Redis database as the shared one,
  fails on INV4 with the same shrunk step program and reproduce blob.
- A replay-only profile shows the failure comes from the shared database: it fails with
  the session's database and passes with an empty one (the negative control).
- Against the reference mesh a short session finds nothing and exits 0.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("hypofuzz", reason="needs the fuzz extra: pip install -e '.[fuzz]'")
pytest.importorskip("redis", reason="needs the fuzz extra: pip install -e '.[fuzz]'")
import redis
from hypothesis.extra.redis import RedisExampleDatabase

from invariants.fuzzing.config import FuzzConfig
from invariants.fuzzing.selection import build_machines, database_key

pytestmark = pytest.mark.fuzz_session

REPO = Path(__file__).resolve().parents[2]
M2_ADAPTER = "invariants.fuzzing.mutant_adapters:M2"
HANG_GUARD = 600  # seconds: only stops a hung subprocess, never judges speed
BLOB = re.compile(r"@reproduce_failure\('[^']+', (b'[^']+')\)")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env.update(extra)
    return env


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True,
        timeout=HANG_GUARD, check=False,
    )


def _steps(text: str) -> list[str]:
    """The shrunk step program: the `state.<rule>(...)` lines of a failure report."""
    return [line.strip() for line in text.splitlines() if line.strip().startswith("state.")]


def _blob(text: str) -> str:
    match = BLOB.search(text)
    assert match is not None, text
    return match.group(1)


def _db(url: str, index: int) -> str:
    return url.rsplit("/", 1)[0] + f"/{index}"


@pytest.fixture(scope="module")
def m2_session(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    work = tmp_path_factory.mktemp("m2-session")
    database = _db(redis_url, 1)
    result = _run(
        ["-m", "harness", "fuzz", "--minutes", "3", "--workers", "2", "--mutant", "M2",
         "--invariant", "INV2", "INV4", "--database", database, "--stop-on-failure",
         "--json", str(work / "summary.json")],
        cwd=work, env=_env(),
    )
    summary = json.loads((work / "summary.json").read_text(encoding="utf-8"))
    return {"result": result, "summary": summary, "database": database}


def _inv4_failure(summary: dict[str, Any]) -> dict[str, Any]:
    found = [f for f in summary["failures"] if f["check"] == "INV4"]
    assert len(found) == 1, summary["failures"]
    return dict(found[0])


def test_m2_session_finds_and_saves_the_failure(m2_session: dict[str, Any]) -> None:
    result, summary = m2_session["result"], m2_session["summary"]
    assert result.returncode == 1, result.stdout + result.stderr
    assert summary["failed"] is True
    failure = _inv4_failure(summary)
    assert failure["reproduces"] and failure["violation"] and failure["new_entries"] >= 1
    assert "INV4 violated" in failure["text"] and "```mermaid" in failure["text"]
    assert not [f for f in summary["failures"] if f["check"] == "INV2"]
    assert "INV4 (new in this session" in result.stdout
    # It is in the shared Redis database, under the key CI replays.
    machine = build_machines(FuzzConfig(mutant="M2", invariants=("INV4",)))["INV4"]
    with redis.Redis.from_url(m2_session["database"]) as client:
        assert list(RedisExampleDatabase(client).fetch(database_key(machine)))


def _plugin_run(
    project: Path, shared: str, profile: str, conftest: str = ""
) -> subprocess.CompletedProcess[str]:
    project.mkdir(parents=True, exist_ok=True)
    (project / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    if conftest:
        (project / "conftest.py").write_text(conftest, encoding="utf-8")
    return _run(
        ["-m", "pytest", "-p", "harness", "--harness", "--harness-adapter", M2_ADAPTER,
         "--harness-invariants", "INV4", "--harness-profile", profile, "-p", "no:cacheprovider"],
        cwd=project, env=_env(HARNESS_SHARED_DATABASE=shared),
    )


def test_ci_profile_replays_the_saved_counterexample(
    m2_session: dict[str, Any], tmp_path: Path
) -> None:
    fuzzed = _inv4_failure(m2_session["summary"])["text"]
    result = _plugin_run(tmp_path / "ci", m2_session["database"], "ci")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "FAILED harness::INV4" in result.stdout
    assert _steps(result.stdout) == _steps(fuzzed)
    assert _blob(result.stdout) == _blob(fuzzed)


REPLAY_ONLY = """
from hypothesis import Phase, settings
from invariants.profiles import PROFILES

settings.register_profile("replay-only", settings(PROFILES["ci"], phases=(Phase.reuse,)))
"""


def test_the_failure_comes_from_the_shared_database(
    m2_session: dict[str, Any], redis_url: str, tmp_path: Path
) -> None:
    fuzzed = _inv4_failure(m2_session["summary"])["text"]
    with_saved = _plugin_run(tmp_path / "saved", m2_session["database"], "replay-only",
                             REPLAY_ONLY)
    assert with_saved.returncode == 1, with_saved.stdout + with_saved.stderr
    assert _steps(with_saved.stdout) == _steps(fuzzed)
    # Negative control: against an empty shared database the same replay has no example
    # to run (and generates none), so no counterexample appears.
    empty = _plugin_run(tmp_path / "empty", _db(redis_url, 5), "replay-only", REPLAY_ONLY)
    assert "run no examples" in empty.stdout, empty.stdout + empty.stderr
    assert "violated" not in empty.stdout and not _steps(empty.stdout)


def test_reference_session_finds_nothing(redis_url: str, tmp_path: Path) -> None:
    result = _run(
        ["-m", "harness", "fuzz", "--minutes", "0.3", "--workers", "2", "--invariant",
         "INV4", "INV7", "--database", _db(redis_url, 2), "--json", str(tmp_path / "s.json")],
        cwd=tmp_path, env=_env(),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    summary = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    assert summary["failed"] is False and summary["failures"] == []
    assert summary["ended_by"] == "time box"
    assert sum(t["examples"] for t in summary["tests"].values()) > 0
    assert "none found" in result.stdout
