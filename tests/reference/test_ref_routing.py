"""Routers (seed 001 #1485, seed 004): routers only ever see packaged deliveries, so their
failure guards must read the envelope."""

from __future__ import annotations

from ref_mutants import mutant_module

from invariants.adapter import Fault, FaultKind, MessageSpec, Route
from invariants.trace import EventKind, MessageClass
from reference_impl.adapter import ReferenceAdapter
from reference_impl.envelope import Delivery


def test_routers_see_only_raw_json() -> None:
    a = ReferenceAdapter()
    a.create_hub("t")
    seen: list[bool] = []
    for router in (a.mesh.monolith, a.mesh.grain):
        original = router.operation

        def spy(delivery: Delivery, original: object = original) -> object:
            seen.append(delivery.packaged)
            return original(delivery)  # type: ignore[operator]

        router.operation = spy  # type: ignore[method-assign]
    a.post("s", "t", MessageSpec("Ping"), route=Route.MONOLITH)
    a.post("s", "t", MessageSpec("Ping"), route=Route.GRAIN)
    assert seen == [True, True]


def test_missing_target_is_answered_not_found_by_its_nearest_live_ancestor() -> None:
    a = ReferenceAdapter()
    a.create_hub("partition")
    d = a.post("client", "partition/_Thread/x", MessageSpec("Get"))
    a.run_until_idle(1_000)
    answer = next(e for e in a.trace() if e.kind is EventKind.FAILURE_EMITTED)
    assert (answer.hub, answer.answers, answer.error) == ("partition", d, "NotFound")


def test_negative_control_suppressing_packaged_deliveries_answers_nothing() -> None:
    a = mutant_module("M13", "adapter").ReferenceAdapter()  # routers see only packaged ones
    a.create_hub("partition")
    a.post("client", "partition/_Thread/x", MessageSpec("Get"))
    a.run_until_idle(1_000)
    assert not [e for e in a.trace() if e.kind is EventKind.FAILURE_EMITTED]


def test_a_gated_target_is_answered_shutting_down() -> None:
    a = ReferenceAdapter()
    a.create_hub("t")
    a.mesh.hubs["t"].gated = True
    d = a.post("s", "t", MessageSpec("Ping"))
    a.run_until_idle(1_000)
    answer = next(e for e in a.trace() if e.kind is EventKind.FAILURE_EMITTED)
    assert (answer.answers, answer.error) == (d, "ShuttingDown")


def test_a_packaged_heartbeat_or_failure_that_fails_routing_is_never_answered() -> None:
    a = ReferenceAdapter()
    a.inject(Fault(FaultKind.REMOVE_TARGET, "gone"))
    for route in (Route.MONOLITH, Route.GRAIN):
        a.post("s", "gone", MessageSpec("Heartbeat", MessageClass.IGNORABLE), route=route)
        a.post("s", "gone", MessageSpec("DeliveryFailure", MessageClass.FAILURE), route=route)
    a.run_until_idle(60_000)
    assert not [e for e in a.trace() if e.kind is EventKind.FAILURE_EMITTED]
    suppressed = [e for e in a.trace() if e.kind is EventKind.ANSWER_SUPPRESSED]
    assert len(suppressed) == 4 and all(e.packaged for e in suppressed)


def test_negative_control_a_payload_type_guard_answers_three_times() -> None:
    """Mutant M1, the pre-fix guard reading RawJson: heartbeat, failure and control are all
    answered."""
    nacks = mutant_module("M1", "scenarios").answer_once(0).summary["nacks_at_sender"]
    assert set(nacks.values()) == {3}
