"""The stop's edges among INV2's and INV7's obligations: exercised on the reference by
their seed programs, and not applicable (never passed) on a mesh without a stop."""

from __future__ import annotations

from invariants.adapter import Capability
from invariants.checks.inv2_bounded_subscribe import STOP_BACKOFF
from invariants.checks.inv7_answer_once import LIVE_NOT_FOUND, ROUNDTRIP
from invariants.dynamic.runner import run_invariant, run_program
from invariants.dynamic.seed_programs import SEED_PROGRAMS
from reference_impl.adapter import ReferenceAdapter, make_adapter


def test_each_seed_program_exercises_its_stop_edge_on_the_reference() -> None:
    backoff = run_program("INV2", make_adapter, SEED_PROGRAMS["INV2"]["stop-in-backoff"])
    assert backoff.passed, backoff.failure_text
    assert backoff.evidence[STOP_BACKOFF] == 1
    refused = run_program("INV7", make_adapter, SEED_PROGRAMS["INV7"]["refused-live-hub"])
    assert refused.passed, refused.failure_text
    assert refused.evidence[LIVE_NOT_FOUND] == 2  # one refusal per router, both ShuttingDown


class _NoStop(ReferenceAdapter):
    """The reference declaring no stop lifecycle (its stop is never driven)."""

    capabilities = ReferenceAdapter.capabilities - {Capability.STOP_LIFECYCLE}


def test_without_a_stop_the_stop_edges_are_not_applicable() -> None:
    inv2 = run_invariant("INV2", _NoStop, "ci")
    assert inv2.passed, inv2.failure_text
    assert inv2.inapplicable == {STOP_BACKOFF: "the adapter declares no stop lifecycle"}
    assert inv2.evidence[STOP_BACKOFF] == 0
    inv7 = run_invariant("INV7", _NoStop, "ci")
    assert inv7.passed, inv7.failure_text
    assert set(inv7.inapplicable) == {LIVE_NOT_FOUND}
    assert ROUNDTRIP not in inv7.inapplicable
