"""`prove --mutate` judges every mutant by adapter-check's conformance programs too: a
mutant that leaves every invariant holding on the one run it makes, but no longer asks its
Chooser, hides its schedule from the search, and adapter-check names it. The unmutated
mesh must keep every convention before its mutants mean anything."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

import harness
import invariants.mutants.score.run as score_run
from harness.cli import main
from invariants.mutants.matrix import reference_scan_config
from invariants.mutants.score.baseline import measure
from invariants.mutants.score.evaluate import CONFORMANCE, Baseline
from invariants.mutants.score.target import TargetError, reference_target

WORKTREE = Path(harness.__file__).resolve().parents[1]
SCHEDULER = "reference_impl/scheduler.py"
# The chooser's pick ignored unless it is 0: every instant runs first come, first served.
FIFO_WHATEVER_THE_PICK = '''\
[[blind]]
path = "scheduler.py"
function = "Scheduler.run"
operator = "core/AddNot"
snippet = "if pick:"
occurrence = 0
reason = "the chooser's pick is ignored"
'''


def test_a_mesh_that_ignores_its_choosers_pick_is_killed_by_adapter_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The unmutated mesh is not measured here (the next test shows that gate).
    monkeypatch.setattr(score_run, "measure", lambda target, profile, **_: Baseline(
        frozenset(), target.checks))
    monkeypatch.chdir(WORKTREE)
    triage = tmp_path / "harness-mutants.toml"
    triage.write_text(FIFO_WHATEVER_THE_PICK, encoding="utf-8")
    code = main(["prove", "--mutate", SCHEDULER, "--triage", str(triage), "--verify-triage",
                 "--only-triaged", "--no-cache", "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 1 and data["killed"] == 1 and data["blind"] == []
    (stale,) = data["stale_triage"]
    assert (stale["check"], stale["phase"]) == (CONFORMANCE, "conformance")
    assert "no longer blind" in stale["why"]


def test_the_unmutated_mesh_must_keep_adapter_checks_conventions() -> None:
    reference = reference_target(reference_scan_config())
    scheduler = reference.sources["scheduler.py"]
    fifo = scheduler.replace("self._fifo = type(self.chooser) is FirstChooser",
                             "self._fifo = True")
    assert fifo != scheduler
    target = dataclasses.replace(reference, sources={**reference.sources, "scheduler.py": fifo})
    with pytest.raises(TargetError) as raised:
        measure(target, "ci", guided=False)
    message = str(raised.value)
    assert "the unmutated mesh fails adapter-check" in message
    assert "schedule" in message and "never asked its Chooser" in message
