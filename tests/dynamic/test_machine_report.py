"""The failure report: deterministic in `ci`, the diagram written to a file on request, and
the scripted chooser replaying a drawn schedule exactly."""

from pathlib import Path

import pytest
from mutant_controls import mutant_factory

from invariants.dynamic.chooser import ScriptedChooser
from invariants.dynamic.plans import machine_class
from invariants.dynamic.runner import run_invariant
from reference_impl.adapter import make_adapter


def test_same_profile_same_counterexample(tmp_path: Path) -> None:
    m1 = mutant_factory("M1")  # routers guard on the payload type: answers what they must not
    first = run_invariant("INV7", m1, "ci")
    second = run_invariant("INV7", m1, "ci", diagram_path=tmp_path / "inv7.mmd")
    assert first.verdict == second.verdict == "violation"
    assert (first.examples, first.shrunk_steps) == (second.examples, second.shrunk_steps)
    assert first.diagram == second.diagram
    written = (tmp_path / "inv7.mmd").read_text()
    assert written == second.diagram
    assert f"(diagram written to {tmp_path / 'inv7.mmd'})" in (second.failure_text or "")


def test_a_passing_run_writes_no_diagram(tmp_path: Path) -> None:
    outcome = run_invariant("INV2", make_adapter, "ci", diagram_path=tmp_path / "none.mmd")
    assert outcome.passed and outcome.diagram is None
    assert not (tmp_path / "none.mmd").exists()


def test_scripted_chooser_reads_its_script_then_falls_back_to_fifo() -> None:
    chooser = ScriptedChooser()
    chooser.load([3, 1])
    assert [chooser.choose(2, "x"), chooser.choose(4, "x"), chooser.choose(5, "x")] == [1, 1, 0]
    assert chooser.choose(1, "x") == 0  # a single option asks nothing of the script
    assert chooser.decisions == 4


def test_unknown_check_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match=r"unknown check\(s\) \['INV9'\]"):
        machine_class("INV9", make_adapter)
