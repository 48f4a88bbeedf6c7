"""Negative controls: every registered mutant fails the machine of each invariant it must
break, fast (within 100 `ci` examples), shrunk small (<= 12 steps), with a full failure
report; and some seed program of that invariant catches it. How soon the drawn rules alone
find each one is search power, measured over seeds by benchmarks/search_power.py."""

import pytest
from mutant_controls import CONTROLS, FIRST_CONTROL, control_id, mutant_factory
from outcome_lines import summary_line

from invariants.checks import CHECK_IDS
from invariants.dynamic.runner import run_invariant, run_seed_programs
from invariants.dynamic.seed_programs import SEED_PROGRAMS


def test_every_invariant_has_a_negative_control() -> None:
    assert set(FIRST_CONTROL) == set(CHECK_IDS)


@pytest.mark.parametrize("control", CONTROLS, ids=control_id)
def test_mutant_is_caught_fast_and_shrunk(control: tuple[str, str]) -> None:
    check_id, mutant_id = control
    outcome = run_invariant(check_id, mutant_factory(mutant_id), "ci")
    assert outcome.verdict == "violation", outcome.failure_text
    assert {v.check_id for v in outcome.violations} == {check_id}
    assert outcome.examples <= 100, summary_line(outcome)
    assert outcome.shrunk_steps is not None and outcome.shrunk_steps <= 12, summary_line(outcome)
    _assert_full_report(check_id, outcome.failure_text or "", outcome.diagram or "")


def _assert_full_report(check_id: str, text: str, diagram: str) -> None:
    assert f"{check_id} violated" in text
    assert f"state = {check_id}Machine()" in text and "state.init(" in text
    assert "state.teardown()" in text
    assert "```mermaid\nsequenceDiagram" in text
    assert "VIOLATION" in diagram


@pytest.mark.parametrize("control", CONTROLS, ids=control_id)
def test_some_seed_program_catches_each_control(control: tuple[str, str]) -> None:
    check_id, mutant_id = control
    outcomes = run_seed_programs(check_id, mutant_factory(mutant_id))
    caught = {name for name, o in outcomes.items() if o.verdict == "violation"}
    assert caught, {name: o.verdict for name, o in outcomes.items()}
    assert caught <= set(SEED_PROGRAMS[check_id])
