"""`check` judges every trace a run drives by every checker the adapter admits: a row
fails on a violation of its invariant that only another invariant's plan drove, replayed
on its own machine, and says whose plan found it; the text and the JSON show the same,
with or without worker processes. The control: the clean reference, where every row
passes and none is found by another run.

The mesh is `RaisesOnFanOut` (tests/dynamic/bystander_meshes.py): one fan-out payload's
handler raises, which INV7 judges and only INV6's plan drives."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pytest
from hypothesis import settings as Settings

from harness.jobs.check.report import CheckResult, render, to_json
from harness.jobs.check.run import run_check
from harness.jobs.check.subject import Subject, bundled_reference
from invariants.adapter import AdapterFactory
from invariants.dynamic.profiles import profile
from reference_impl.adapter import make_adapter

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "dynamic"))

from bystander_meshes import RaisesOnFanOut

PROFILE = "bystanders-small"  # derandomized, a few examples per invariant
Settings.register_profile(PROFILE, Settings(profile("ci"), max_examples=5))


def _check(factory: AdapterFactory, jobs: int) -> CheckResult:
    subject: Subject = dataclasses.replace(
        bundled_reference(PROFILE), factories={"mesh": factory}, invariants=("INV6", "INV7"),
        kill_matrix=False, seed_scenarios=False, mesh="mesh")
    return run_check(PROFILE, kill_matrix=False, subject=subject, jobs=jobs)


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_violation_only_another_plan_drives_fails_its_own_row(jobs: int) -> None:
    result = _check(RaisesOnFanOut, jobs)
    inv6, inv7 = result.invariants
    assert inv6.verdict == "pass"  # INV6's own verdict is its own
    assert (inv7.verdict, inv7.passed) == ("violation", False)
    assert "though the harness posted no payload that raises" in inv7.evidence
    assert inv7.failure.startswith("Found while driving INV6's plan: INV6's run judged INV7 "
                                   "as a bystander")
    assert "replayed on INV7's own machine, it fails again" in inv7.failure
    example = inv7.counterexample
    assert example is not None and (example.found_by, example.replayed) == ("INV6", True)
    assert example.program.startswith("state = INV7Machine()\nstate.init(")
    assert "state.fanout(" in example.program and example.diagram
    assert not result.ok

    text = render(result)
    assert "INV7" in text and "Found while driving INV6's plan" in text
    document = json.loads(to_json(result))
    row = document["invariants"][1]
    assert (row["check"], row["passed"], row["verdict"]) == ("INV7", False, "violation")
    assert row["counterexample"]["found_by"] == "INV6"
    assert row["counterexample"]["replayed"] is True
    assert "state.fanout(" in row["counterexample"]["program"]


def test_the_clean_reference_passes_with_nothing_found_by_another_run() -> None:
    result = _check(make_adapter, 1)
    assert result.ok, render(result)
    assert [row.verdict for row in result.invariants] == ["pass", "pass"]
    assert all(row.counterexample is None for row in result.invariants)
    assert "Found while driving" not in render(result)
    assert "counts include the cases other invariants' runs gave: INV6 " in render(result)
    # Each row's counts include what the other row's run saw of it.
    inv6, inv7 = result.invariants
    assert set(inv7.borrowed) == {"INV6"} and set(inv6.borrowed) <= {"INV7"}
    lent = inv7.borrowed["INV6"]
    assert lent and all(inv7.counts[name] >= count for name, count in lent.items())
    obligations = json.loads(to_json(result))["invariants"][1]["obligations"]
    assert any(o.get("by_other_runs", {}).get("INV6") for o in obligations)
