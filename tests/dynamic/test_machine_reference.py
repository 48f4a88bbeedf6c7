"""Every machine is green against the reference mesh in the `ci` profile, and reaches the
behaviour its invariant is about (a green run that never got there would prove nothing):
every obligation its checker lists was exercised at least once."""

import pytest
from hypothesis import settings
from hypothesis.stateful import run_state_machine_as_test
from outcome_lines import summary_line

from invariants.adapter import Capability, Chooser
from invariants.checks import CHECK_IDS, CHECKS
from invariants.dynamic.judge import recording
from invariants.dynamic.plans import FAMILIES, FAMILY_NEEDS, machine_class
from invariants.dynamic.profiles import profile
from invariants.dynamic.runner import run_invariant, run_seed_programs
from reference_impl.adapter import ReferenceAdapter, make_adapter

REACHED = {
    "INV1": {"post rejected", "answer suppressed"},
    "INV2": {"subscription terminated", "subscription answered"},
    "INV3": {"aggregate shed"},
    "INV4": {"attempt timed out", "delivery retry budget spent"},
    "INV5": {"graceful stop", "non-graceful stop", "stop hold expired"},
    "INV6": {"breaker tripped"},
    "INV7": {"answer suppressed", "failure answered", "dispatch refused"},
}


@pytest.mark.parametrize("check_id", CHECK_IDS)
@pytest.mark.slow
def test_reference_passes_in_ci_and_reaches_the_behaviour(check_id: str) -> None:
    outcome = run_invariant(check_id, make_adapter, "ci")
    assert outcome.passed, outcome.failure_text
    assert outcome.examples >= 50, summary_line(outcome)
    missing = REACHED[check_id] - set(outcome.behaviours)
    assert not missing, f"never reached {sorted(missing)}; saw {dict(outcome.behaviours)}"
    assert list(outcome.evidence) == list(CHECKS[check_id].obligations)
    # Every obligation exercised but those of a capability the reference does not declare
    # (it is an at-most-once mesh: no at_least_once), which are listed, never passed.
    applicable = {name: count for name, count in outcome.evidence.items()
                  if name not in outcome.inapplicable}
    assert all(count > 0 for count in applicable.values()), dict(outcome.evidence)
    assert set(outcome.inapplicable) == {
        name for name, need in CHECKS[check_id].obligation_needs.items()
        if need is Capability.AT_LEAST_ONCE}
    assert outcome.unexercised == {}


@pytest.mark.parametrize("check_id", CHECK_IDS)
def test_reference_passes_every_seed_program(check_id: str) -> None:
    outcomes = run_seed_programs(check_id, make_adapter)
    assert outcomes
    for name, outcome in outcomes.items():
        assert outcome.passed, f"{name}: {outcome.failure_text}"


def _roundtrip(chooser: Chooser) -> ReferenceAdapter:
    """Every routed envelope goes through a JSON round trip before its router sees it."""
    return ReferenceAdapter(chooser, roundtrip_envelopes=True)


@pytest.mark.parametrize("check_id", ["INV1", "INV7"])
def test_answer_policy_holds_after_a_json_round_trip_of_the_envelope(check_id: str) -> None:
    outcome = run_invariant(check_id, _roundtrip, "ci")
    assert outcome.passed, outcome.failure_text


def test_one_machine_can_check_every_invariant_at_once() -> None:
    machine = machine_class(CHECK_IDS, make_adapter)
    assert machine.__name__ == "".join(CHECK_IDS) + "Machine"
    # Every family but those only a mesh marking its timer ties, or on a network, takes.
    offered = {f for f in FAMILIES
               if FAMILY_NEEDS.get(f) not in (Capability.TIMER_TIES, Capability.NETWORK)}
    assert {f for f in FAMILIES if hasattr(machine, f)} == offered
    with recording() as stats:
        run_state_machine_as_test(machine, settings=settings(profile("ci"), max_examples=8))
    assert stats.examples >= 8
