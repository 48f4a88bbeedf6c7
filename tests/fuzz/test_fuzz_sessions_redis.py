"""Real HypoFuzz sessions sharing a Redis example database, and CI replaying what they saved.

- Against mutant M2 (delivery retries re-send timed-out calls), a 2-worker session finds
  the INV4 failure, shrinks it and saves it in Redis; it exits 1.
- Against a mesh with M2's bug confined to hub h2 (`fuzz_rare_resend_mesh`: the seed
  programs pass on it, and so does the `ci` profile on its own), a session finds the
  failure; `pytest -p harness` in the `ci` profile with that Redis database as the shared
  one (named by `HARNESS_SHARED_DATABASE` or by `--harness-shared-database`) then fails on
  INV4 with the same shrunk step program and reproduce blob, and passes without it (the
  negative control). A twin of that mesh under another name passes with the database:
  the failure is saved for the mesh it was found on.
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

pytestmark = [pytest.mark.fuzz_session, pytest.mark.slow]

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
RARE_ADAPTER = "fuzz_rare_resend_mesh:make_adapter"
TWIN_ADAPTER = "fuzz_rare_resend_mesh:make_twin_adapter"
HANG_GUARD = 600  # seconds: only stops a hung subprocess, never judges speed
BLOB = re.compile(r"@reproduce_failure\('[^']+', (b'[^']+')\)")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_")}
    paths = [str(REPO), str(HERE), env.get("PYTHONPATH")]
    env["PYTHONPATH"] = os.pathsep.join(filter(None, paths))
    env.update(extra)
    return env


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True,
        timeout=HANG_GUARD, check=False,
    )


def _steps(text: str) -> list[str]:
    """The shrunk step program: the `state.<rule>(...)` lines of the first failure report
    (pytest repeats the whole report in its short summary where a CI variable is set)."""
    report = text.split("short test summary info", 1)[0]
    return [line.strip() for line in report.splitlines() if line.strip().startswith("state.")]


def _blob(text: str) -> str:
    match = BLOB.search(text)
    assert match is not None, text
    return match.group(1)


def _db(url: str, index: int) -> str:
    return url.rsplit("/", 1)[0] + f"/{index}"


def _session(work: Path, database: str, subject: list[str]) -> dict[str, Any]:
    result = _run(
        ["-m", "harness", "fuzz", "--minutes", "4", "--workers", "2", *subject,
         "--database", database, "--stop-on-failure", "--json", str(work / "summary.json")],
        cwd=work, env=_env(),
    )
    summary = json.loads((work / "summary.json").read_text(encoding="utf-8"))
    return {"result": result, "summary": summary, "database": database}


@pytest.fixture(scope="module")
def m2_session(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    # Two invariants, so HypoFuzz gives both workers a test (worker i gets tests i, i+1, ...).
    return _session(tmp_path_factory.mktemp("m2"), _db(redis_url, 1),
                    ["--mutant", "M2", "--invariant", "INV2", "INV4"])


@pytest.fixture(scope="module")
def rare_session(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _session(tmp_path_factory.mktemp("rare"), _db(redis_url, 3),
                    ["--adapter", RARE_ADAPTER, "--invariant", "INV4"])


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


def _plugin_ci_run(
    project: Path, shared: str | None, *, via: str = "variable", adapter: str = RARE_ADAPTER
) -> subprocess.CompletedProcess[str]:
    project.mkdir(parents=True, exist_ok=True)
    (project / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    env = _env(HARNESS_SHARED_DATABASE=shared) if shared and via == "variable" else _env()
    option = ["--harness-shared-database", shared] if shared and via == "option" else []
    return _run(
        ["-m", "pytest", "-p", "harness", "--harness", "--harness-adapter", adapter,
         "--harness-invariants", "INV4", "--harness-profile", "ci", "-p", "no:cacheprovider",
         *option],
        cwd=project, env=env,
    )


@pytest.mark.parametrize("via", ["variable", "option"])
def test_ci_replays_the_saved_counterexample(
    rare_session: dict[str, Any], tmp_path: Path, via: str
) -> None:
    result, summary = rare_session["result"], rare_session["summary"]
    assert result.returncode == 1, result.stdout + result.stderr
    fuzzed = _inv4_failure(summary)["text"]
    assert _steps(fuzzed) and "'h2'" in fuzzed
    replayed = _plugin_ci_run(tmp_path / "with-shared", rare_session["database"], via=via)
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert "FAILED harness::INV4" in replayed.stdout
    assert _steps(replayed.stdout) == _steps(fuzzed)
    assert _blob(replayed.stdout) == _blob(fuzzed)


def test_a_twin_of_the_mesh_does_not_replay_it(
    rare_session: dict[str, Any], tmp_path: Path
) -> None:
    """The same bug under another factory name: `ci` draws the same programs on both and
    does not find the bug itself (the control below), so it passes unless the session's
    failure were replayed on it."""
    assert _inv4_failure(rare_session["summary"])["reproduces"]
    twin = _plugin_ci_run(tmp_path / "twin", rare_session["database"], via="option",
                          adapter=TWIN_ADAPTER)
    assert twin.returncode == 0, twin.stdout + twin.stderr
    assert "1 passed" in twin.stdout


def test_without_the_shared_database_ci_does_not_find_it(tmp_path: Path) -> None:
    """The negative control: the seed programs and the ci profile's own examples pass on
    this mesh, so the failure above came from the session."""
    plain = _plugin_ci_run(tmp_path / "plain", None)
    assert plain.returncode == 0, plain.stdout + plain.stderr  # 5 if nothing had run


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
    # The box's clock started after start-up; the workers took the hub's collection.
    started = summary["box_started_seconds"]
    assert started is not None and summary["elapsed_seconds"] >= started + 18.0
    assert f"box: 18 s of fuzzing after {started:.1f} s start-up" in result.stdout
    assert summary["startup_phases"]["worker collection"] < 0.5
