"""aiomesh's own static rule, AIO001 (examples/aiomesh-repo/aiomesh_rules/hub_turns.py):
the clean mesh passes it from `scan`, `check` and `pytest -p harness`, and the planted
static bug (planted/relay.py, copied into the mesh's source) fails each with AIO001. The
import-linter contract of the example's pyproject keeps the rule module on the public
API: kept as written, broken by a rule that imports the scanner's internals.

Each run is a subprocess in a fresh copy, this tree first on PYTHONPATH and the copy's
`src` after it, as tests/examples/test_aiomesh_repo.py runs the example.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "aiomesh-repo"
DOC = ROOT / "docs" / "team-rules.md"
FINDING = "src/aiomesh/relay.py:33:13 AIO001 the hub's turn (RelayHub._pump) awaits deliver()"


def _copy(tmp_path: Path, planted: bool = False) -> Path:
    repo = tmp_path / "aiomesh-repo"
    shutil.copytree(EXAMPLE, repo, ignore=shutil.ignore_patterns(
        "__pycache__", ".pytest_cache", ".hypothesis", ".harness-cache", ".benchmarks",
        ".import_linter_cache"))
    if planted:
        shutil.copy(repo / "planted" / "relay.py", repo / "src" / "aiomesh" / "relay.py")
    return repo


def _run(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST_", "HARNESS_")) and k != "CI"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(repo / "src")])
    return subprocess.run(list(args), cwd=repo, env=env, capture_output=True, text=True,
                          timeout=900, check=False)


def _python(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return _run(repo, sys.executable, "-m", *args)


def test_scan_passes_the_clean_mesh_and_fails_the_planted_bug(tmp_path: Path) -> None:
    clean = _python(_copy(tmp_path / "clean"), "harness", "scan", "--no-cache")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    planted = _python(_copy(tmp_path / "planted", planted=True), "harness", "scan", "--no-cache")
    assert planted.returncode == 1, planted.stdout + planted.stderr
    assert planted.stdout.startswith(FINDING)
    assert "1 finding(s), 0 error(s)" in planted.stdout
    # docs/team-rules.md shows these outputs (a cold scan there; the counts differ only
    # in what the cache served)
    doc = DOC.read_text(encoding="utf-8")
    assert f"$ python3 -m harness scan\n{clean.stdout}[exit 0]" in doc
    assert "\n".join(planted.stdout.splitlines()[:2]) in doc


@pytest.mark.slow
def test_pytest_runs_the_rules_examples_and_fails_the_planted_bug(tmp_path: Path) -> None:
    args = ("pytest", "-p", "harness", "-p", "no:cacheprovider", "-m", "harness_scan", "-rA")
    clean = _python(_copy(tmp_path / "clean"), *args)
    assert clean.returncode == 0, clean.stdout[-3000:] + clean.stderr
    for example in ("valid-0", "valid-1", "valid-2", "invalid-0", "invalid-1"):
        assert f"PASSED harness::rule-example[AIO001-{example}]" in clean.stdout
    planted = _python(_copy(tmp_path / "planted", planted=True), *args)
    assert planted.returncode == 1, planted.stdout[-3000:] + planted.stderr
    assert "FAILED src/aiomesh/relay.py::harness-scan" in planted.stdout
    assert FINDING in planted.stdout


@pytest.mark.slow
def test_check_passes_the_clean_mesh_and_fails_the_planted_bug(tmp_path: Path) -> None:
    args = ("harness", "check", "--quiet", "--no-prove", "--invariants", "INV1")
    clean = _python(_copy(tmp_path / "clean"), *args)
    assert clean.returncode == 0, clean.stdout[-3000:] + clean.stderr
    assert "1. Static scan: pass" in clean.stdout
    planted = _python(_copy(tmp_path / "planted", planted=True), *args)
    assert planted.returncode == 1, planted.stdout[-3000:] + planted.stderr
    assert "1. Static scan: FAIL" in planted.stdout
    assert f"   {FINDING}" in planted.stdout


def test_the_team_modules_keep_to_the_public_apis(tmp_path: Path) -> None:
    repo = _copy(tmp_path)
    kept = _run(repo, shutil.which("lint-imports") or "lint-imports", "--no-cache", "--no-logo")
    assert kept.returncode == 0, kept.stdout + kept.stderr
    assert "Contracts: 2 kept, 0 broken." in kept.stdout
    # the control: a rule module that reaches into the scanner's internals breaks it
    rule = repo / "aiomesh_rules" / "hub_turns.py"
    rule.write_text(rule.read_text(encoding="utf-8") + "\nfrom invariants.scan.context import "
                    "CallRecord  # noqa: E402\n", encoding="utf-8")
    broken = _run(repo, shutil.which("lint-imports") or "lint-imports", "--no-cache", "--no-logo")
    assert broken.returncode == 1, broken.stdout + broken.stderr
    assert "aiomesh_rules.hub_turns -> invariants.scan.context" in broken.stdout
    # and an invariant module that reaches into the checkers' internals breaks the other
    turns = repo / "aiomesh_invariants" / "turns.py"
    turns.write_text(turns.read_text(encoding="utf-8") + "\nfrom invariants.checks.monitor "
                     "import run_monitor  # noqa: E402\n", encoding="utf-8")
    both = _run(repo, shutil.which("lint-imports") or "lint-imports", "--no-cache", "--no-logo")
    assert "Contracts: 0 kept, 2 broken." in both.stdout, both.stdout
    assert "aiomesh_invariants.turns -> invariants.checks.monitor" in both.stdout
