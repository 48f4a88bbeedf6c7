"""Negative controls: a mesh broken in one invariant's way fails that invariant's machine,
fast (within 100 `ci` examples), shrunk small (<= 12 steps), with a full failure report;
also with the seed scenarios left out, so the drawn rules alone are shown to find it."""

import pytest
from broken_meshes import BROKEN, MORE_BROKEN

from invariants.adapter import AdapterFactory
from invariants.checks import CHECK_IDS
from invariants.dynamic.runner import run_invariant, run_seed_programs, summary_line
from invariants.dynamic.seed_programs import SEED_PROGRAMS

EVERY_CONTROL = [*BROKEN.items(), *MORE_BROKEN]


def _ids(control: tuple[str, AdapterFactory]) -> str:
    check_id, mesh = control
    return f"{check_id}-{getattr(mesh, '__name__', 'mesh')}"


@pytest.mark.parametrize("check_id", CHECK_IDS)
def test_broken_mesh_is_caught_fast_and_shrunk(check_id: str) -> None:
    outcome = run_invariant(check_id, BROKEN[check_id], "ci")
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


@pytest.mark.parametrize("control", EVERY_CONTROL, ids=_ids)
def test_drawn_rules_alone_catch_every_control(control: tuple[str, AdapterFactory]) -> None:
    check_id, mesh = control
    outcome = run_invariant(check_id, mesh, "ci", seed_scenarios=False)
    assert outcome.verdict == "violation", outcome.failure_text
    assert {v.check_id for v in outcome.violations} == {check_id}
    text = outcome.failure_text or ""
    assert "scenario='" not in text and "Seed program" not in text
    assert "Falsifying example:" in text and "@reproduce_failure(" in text
    _assert_full_report(check_id, text, outcome.diagram or "")
    assert outcome.examples <= 100, summary_line(outcome)
    assert outcome.shrunk_steps is not None and outcome.shrunk_steps <= 12, summary_line(outcome)


@pytest.mark.parametrize("control", EVERY_CONTROL, ids=_ids)
def test_some_seed_program_catches_each_control(control: tuple[str, AdapterFactory]) -> None:
    check_id, mesh = control
    outcomes = run_seed_programs(check_id, mesh)
    caught = {name for name, o in outcomes.items() if o.verdict == "violation"}
    assert caught, {name: o.verdict for name, o in outcomes.items()}
    assert caught <= set(SEED_PROGRAMS[check_id])
