"""Planted bugs in a copy of the tinymesh example: the harness must fail each one it can
see with a line naming the invariant or rule, and the blind spots are pinned as such.

The bugs and what the harness says about each are in `planted_bugs.py`. A blind spot that
starts failing is good news: move it to the caught ones with its line.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path

import pytest
import tinymesh_repo
from planted_bugs import BUGS, INV, SEED_STAGES, Bug


def _run(tmp_path: Path, bug: Bug, *args: str) -> tinymesh_repo.Run:
    repo = tinymesh_repo.copy_to(tmp_path)
    tinymesh_repo.patch(repo, bug.path, bug.edits)
    return tinymesh_repo.pytest_harness(repo, "-m", "harness", "-k", bug.select, *args)


def _has_line(output: str, pattern: str) -> bool:
    return any(fnmatch.fnmatchcase(line, pattern) for line in output.splitlines())


# The default run takes a sample of the caught bugs; the slow tier the rest.
SAMPLE = ("no-leftovers-named",)


@pytest.mark.parametrize("bug", [
    pytest.param(b, marks=() if b.name in SAMPLE else pytest.mark.slow)
    for b in BUGS if b.caught], ids=lambda b: b.name)
def test_a_planted_bug_fails_the_run_naming_the_invariant(tmp_path: Path, bug: Bug) -> None:
    result = _run(tmp_path, bug, "-rf")
    assert result.returncode == 1, result.stdout[-3000:] + result.stderr
    for item, line in bug.caught:
        assert f"FAILED {item} - " in result.stdout, item
        assert _has_line(result.stdout, line), f"{line!r} not in\n{result.stdout[-3000:]}"


@pytest.mark.parametrize("bug", [b for b in BUGS if not b.caught], ids=lambda b: b.name)
def test_a_blind_spot_is_still_blind(tmp_path: Path, bug: Bug) -> None:
    result = _run(tmp_path, bug, "-v")
    assert result.returncode == 0, (
        f"the harness now catches {bug.name}: move it to the caught bugs\n" + result.stdout
    )
    assert f"harness::{bug.expected}[tinymesh.harness_adapter:make] PASSED" in result.stdout


def _renumbered(tmp_path: Path, stop_stages: str) -> tinymesh_repo.Run:
    repo = tinymesh_repo.copy_to(tmp_path)
    tinymesh_repo.patch(repo, "src/tinymesh/shutdown.py", [SEED_STAGES])
    tinymesh_repo.patch(repo, "pyproject.toml", [(
        "stop_stages = {Active = 300, GrainDeactivation = 200}", stop_stages)])
    return tinymesh_repo.pytest_harness(repo, "-m", "harness", "-k", "INV5", "-v")


@pytest.mark.slow
def test_the_stop_stages_param_is_what_inv5_knows_the_stages_by(tmp_path: Path) -> None:
    # The mesh renumbered to the seed silo's stages, the param following: INV5 passes ...
    result = _renumbered(tmp_path / "following",
                         "stop_stages = {Active = 20000, GrainDeactivation = 19998}")
    assert result.returncode == 0, result.stdout[-3000:]
    assert "harness::INV5[tinymesh.harness_adapter:make] PASSED" in result.stdout
    # ... and the control: the param left at 300/200, the hold goes unrecognised.
    stale = _renumbered(tmp_path / "stale", "stop_stages = {Active = 300, GrainDeactivation = 200}")
    assert stale.returncode == 1, stale.stdout[-3000:]
    assert "INV5 (a graceful stop holds until accepted legs have landed) not exercised" in (
        stale.stdout)
    assert "no stop stage named Active was entered: if your mesh numbers its stages " in (
        stale.stdout)


def test_at_least_six_planted_bugs_are_caught_by_the_invariant_they_exist_for() -> None:
    caught = [b for b in BUGS if b.caught]
    assert len(caught) >= 6
    for bug in caught:
        assert any(item == INV.format(bug.expected) for item, _ in bug.caught), bug.name
    for bug in BUGS:
        if not bug.caught:
            assert bug.blind_spot, f"{bug.name}: say why the harness does not see it"
