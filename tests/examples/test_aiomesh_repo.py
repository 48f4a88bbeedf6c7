"""The aiomesh example repository (examples/aiomesh-repo/), run as its user runs it.

Each run is a subprocess in a fresh copy (`example_repos`).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from example_repos import copy_example, run_in

REPO = "aiomesh-repo"


def test_the_demo_runs_on_the_stock_loop_and_exits_0(tmp_path: Path) -> None:
    done = run_in(copy_example(REPO, tmp_path), "aiomesh", "demo")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1].endswith("all as expected")


@pytest.mark.slow
def test_the_repositorys_own_tests_pass(tmp_path: Path) -> None:
    done = run_in(copy_example(REPO, tmp_path), "pytest", "-q", "-p", "no:cacheprovider",
                  "-p", "no:harness")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    assert " passed" in done.stdout.splitlines()[-1]


def test_its_adapter_conforms(tmp_path: Path) -> None:
    done = run_in(copy_example(REPO, tmp_path), "harness", "adapter-check")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "conforms: 11 program(s), 0 broken convention(s)" in done.stdout


@pytest.mark.slow
def test_the_clean_mesh_passes_every_invariant(tmp_path: Path) -> None:
    done = run_in(copy_example(REPO, tmp_path), "pytest", "-p", "harness", "-p", "no:cacheprovider",
                "-m", "harness", "-q")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    assert "invariants on aiomesh.harness_adapter:make: 8 passed, 0 failed" in done.stdout
