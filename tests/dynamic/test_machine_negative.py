"""Negative controls: a mesh broken in one invariant's way fails that invariant's machine,
fast (within 100 `ci` examples), shrunk small (<= 12 steps), with a full failure report."""

import pytest
from broken_meshes import BROKEN

from invariants.checks import CHECK_IDS
from invariants.dynamic_run import run_invariant, run_seed_programs, summary_line
from invariants.seed_programs import SEED_PROGRAMS


@pytest.mark.parametrize("check_id", CHECK_IDS)
def test_broken_mesh_is_caught_fast_and_shrunk(check_id: str) -> None:
    outcome = run_invariant(check_id, BROKEN[check_id], "ci")
    assert outcome.verdict == "violation", outcome.failure_text
    assert {v.check_id for v in outcome.violations} == {check_id}
    assert outcome.examples <= 100, summary_line(outcome)
    assert outcome.shrunk_steps is not None and outcome.shrunk_steps <= 12, summary_line(outcome)
    text = outcome.failure_text or ""
    assert f"{check_id} violated" in text
    assert f"state = {check_id}Machine()" in text and "state.init(" in text
    assert "state.teardown()" in text
    assert "@reproduce_failure(" in text
    assert "```mermaid\nsequenceDiagram" in text
    assert "VIOLATION" in (outcome.diagram or "")


@pytest.mark.parametrize("check_id", CHECK_IDS)
def test_some_seed_program_catches_the_broken_mesh(check_id: str) -> None:
    outcomes = run_seed_programs(check_id, BROKEN[check_id])
    caught = {name for name, o in outcomes.items() if o.verdict == "violation"}
    assert caught, {name: o.verdict for name, o in outcomes.items()}
    assert set(caught) <= set(SEED_PROGRAMS[check_id])
