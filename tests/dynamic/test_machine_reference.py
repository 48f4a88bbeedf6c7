"""Every machine is green against the reference mesh in the `ci` profile, and reaches the
behaviour its invariant is about (a green run that never got there would prove nothing)."""

import pytest

from invariants.checks import CHECK_IDS
from invariants.dynamic_run import run_invariant, run_seed_programs, summary_line
from reference_impl.adapter import make_adapter

REACHED = {
    "INV1": {"post rejected", "answer suppressed"},
    "INV2": {"subscription terminated", "subscription answered"},
    "INV3": {"aggregate shed"},
    "INV4": {"attempt timed out", "delivery retry budget spent"},
    "INV5": {"graceful stop", "non-graceful stop"},
    "INV6": {"breaker tripped"},
    "INV7": {"answer suppressed", "failure answered", "dispatch refused"},
}


@pytest.mark.parametrize("check_id", CHECK_IDS)
def test_reference_passes_in_ci_and_reaches_the_behaviour(check_id: str) -> None:
    outcome = run_invariant(check_id, make_adapter, "ci")
    assert outcome.passed, outcome.failure_text
    assert outcome.examples >= 50, summary_line(outcome)
    missing = REACHED[check_id] - set(outcome.behaviours)
    assert not missing, f"never reached {sorted(missing)}; saw {dict(outcome.behaviours)}"


@pytest.mark.parametrize("check_id", CHECK_IDS)
def test_reference_passes_every_seed_program(check_id: str) -> None:
    outcomes = run_seed_programs(check_id, make_adapter)
    assert outcomes
    for name, outcome in outcomes.items():
        assert outcome.passed, f"{name}: {outcome.failure_text}"
