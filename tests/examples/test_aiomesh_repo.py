"""The aiomesh example repository (examples/aiomesh-repo/), run as its user runs it.

Each run is a subprocess in a fresh copy (no caches written into the source tree), with
this tree first on PYTHONPATH and the copy's `src` after it.
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


def _copy(tmp_path: Path) -> Path:
    repo = tmp_path / "aiomesh-repo"
    shutil.copytree(EXAMPLE, repo, ignore=shutil.ignore_patterns(
        "__pycache__", ".pytest_cache", ".hypothesis", ".harness-cache", ".benchmarks"))
    return repo


def _run(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST_", "HARNESS_")) and k != "CI"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(repo / "src")])
    return subprocess.run([sys.executable, "-m", *args], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=900, check=False)


def test_the_demo_runs_on_the_stock_loop_and_exits_0(tmp_path: Path) -> None:
    done = _run(_copy(tmp_path), "aiomesh", "demo")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1].endswith("all as expected")


@pytest.mark.slow
def test_the_repositorys_own_tests_pass(tmp_path: Path) -> None:
    done = _run(_copy(tmp_path), "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:harness")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    assert " passed" in done.stdout.splitlines()[-1]


def test_its_adapter_conforms(tmp_path: Path) -> None:
    done = _run(_copy(tmp_path), "harness", "adapter-check")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "conforms: 11 program(s), 0 broken convention(s)" in done.stdout


@pytest.mark.slow
def test_the_clean_mesh_passes_every_invariant(tmp_path: Path) -> None:
    done = _run(_copy(tmp_path), "pytest", "-p", "harness", "-p", "no:cacheprovider",
                "-m", "harness", "-q")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    assert "invariants on aiomesh.harness_adapter:make: 8 passed, 0 failed" in done.stdout
