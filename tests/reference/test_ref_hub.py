"""The hub's action block and intake (seed 001 Invariants 1 and 3; seed 004)."""

from __future__ import annotations

from typing import Any

from ref_mutants import mutant_module

from invariants.adapter import Fault, FaultKind, MessageSpec, Route
from invariants.trace import EventKind, MessageClass, TraceEvent
from reference_impl.adapter import ReferenceAdapter
from reference_impl.envelope import Delivery
from reference_impl.hub import Intake
from reference_impl.mesh import FAULTING_REQUEST
from reference_impl.messages import DeliveryFailure, ErrorType, Message

OUTCOMES = {EventKind.ENQUEUED, EventKind.REJECTED, EventKind.GATED, EventKind.DROPPED,
            EventKind.SHED}


def _kinds(trace: list[TraceEvent] | tuple[TraceEvent, ...], delivery_id: str) -> list[EventKind]:
    return [e.kind for e in trace if e.delivery_id == delivery_id]


def test_every_intake_is_posted_then_exactly_one_outcome() -> None:
    a = ReferenceAdapter()
    a.create_hub("hub", watermark=3)
    a.inject(Fault(FaultKind.BLOCK_HUB, "hub", duration_ms=10))
    ids = [a.post("s", "hub", MessageSpec("Heartbeat", MessageClass.IGNORABLE),
                  route=Route.DIRECT) for _ in range(5)]
    ids.append(a.post("s", "hub", MessageSpec("Ping"), identity=None, route=Route.DIRECT))
    a.run_until_idle(1_000)
    trace = list(a.trace())
    for delivery_id in ids:
        kinds = _kinds(trace, delivery_id)
        assert kinds[0] is EventKind.POSTED
        assert sum(1 for k in kinds if k in OUTCOMES) == 1


def test_posted_states_the_delivery() -> None:
    a = ReferenceAdapter()
    a.create_hub("hub")
    d = a.post("s", "hub", MessageSpec("Update", diagnostic_key="node/1"))
    a.run_until_idle(1_000)
    posted = next(e for e in a.trace() if e.kind is EventKind.POSTED and e.delivery_id == d)
    assert (posted.hub, posted.sender, posted.target, posted.message_type,
            posted.message_class, posted.diagnostic_key, posted.packaged) == (
        "hub", "s", "hub", "Update", MessageClass.USER, "node/1", True)


def test_rejected_post_is_terminal_no_answer_of_any_kind() -> None:
    """Seed 001 Invariant 1: log once, drop; zero DeliveryFailure traffic."""
    a = ReferenceAdapter()
    a.create_hub("composer")
    d = a.post("portal", "composer", MessageSpec("UpdateStreamRequest"), identity=None)
    a.run_until_idle(60_000)
    trace = a.trace()
    assert _kinds(list(trace), d).count(EventKind.REJECTED) == 1
    assert not [e for e in trace if e.kind is EventKind.FAILURE_EMITTED]
    assert not [e for e in trace if e.message_class is MessageClass.FAILURE]


def test_negative_control_an_answering_identity_guard_nacks_the_rejection() -> None:
    a = mutant_module("M9", "adapter").ReferenceAdapter()  # the guard calls report_failure
    a.create_hub("composer")
    d = a.post("portal", "composer", MessageSpec("UpdateStreamRequest"), identity=None)
    a.run_until_idle(60_000)
    emitted = [e for e in a.trace() if e.kind is EventKind.FAILURE_EMITTED]
    assert [(e.answers, e.error) for e in emitted] == [(d, "Rejected")]


def test_system_messages_are_exempt_from_the_identity_check_only() -> None:
    a = ReferenceAdapter()
    a.create_hub("hub")
    d = a.post("s", "hub", MessageSpec("Sync", MessageClass.SYSTEM), identity=None,
               route=Route.DIRECT)
    a.run_until_idle(1_000)
    assert EventKind.HANDLED in _kinds(list(a.trace()), d)


def test_one_message_per_turn_and_posts_queue_behind_the_turn() -> None:
    a = ReferenceAdapter()
    a.create_hub("hub")
    ids = [a.post("s", "hub", MessageSpec("Ping"), route=Route.DIRECT) for _ in range(3)]
    a.run_until_idle(1_000)
    handled = [e.delivery_id for e in a.trace() if e.kind is EventKind.HANDLED]
    assert handled == ids


def test_a_faulting_handler_is_logged_and_the_pump_goes_on() -> None:
    a = ReferenceAdapter()
    a.create_hub("hub")
    bad = a.post("s", "hub", MessageSpec(FAULTING_REQUEST), route=Route.DIRECT)
    good = a.post("s", "hub", MessageSpec("Ping"), route=Route.DIRECT)
    a.run_until_idle(1_000)
    trace = list(a.trace())
    assert EventKind.HANDLER_FAULTED in _kinds(trace, bad)
    assert EventKind.HANDLED in _kinds(trace, good)


def test_a_blocked_turn_holds_the_queue_until_released() -> None:
    a = ReferenceAdapter()
    a.create_hub("hub")
    a.inject(Fault(FaultKind.BLOCK_HUB, "hub", duration_ms=500))
    d = a.post("s", "hub", MessageSpec("Ping"), route=Route.DIRECT)
    a.advance(499)
    assert EventKind.HANDLED not in _kinds(list(a.trace()), d)
    a.advance(1)
    handled = next(e for e in a.trace() if e.kind is EventKind.HANDLED)
    assert handled.time_ms == 500


def _flood_then_probe(mesh: Any = ReferenceAdapter) -> tuple[ReferenceAdapter, str]:
    """200 heartbeats at a held hub with watermark 25, then a user probe behind them."""
    a = mesh()
    a.create_hub("hub", watermark=25)
    a.inject(Fault(FaultKind.BLOCK_HUB, "hub", duration_ms=1_000))
    for _ in range(200):
        a.post("f", "hub", MessageSpec("Heartbeat", MessageClass.IGNORABLE), route=Route.DIRECT)
    probe = a.post("p", "hub", MessageSpec("Probe"), route=Route.DIRECT)
    a.run_until_idle(60_000)
    return a, probe


def test_flood_past_the_watermark_sheds_only_ignorable_and_the_probe_lands() -> None:
    """Seed 001 test 4/5: shed count > 0, per-key trip count 0, user probe handled."""
    a, probe = _flood_then_probe()
    hub = a.mesh.hubs["hub"]
    assert hub.watermark.shed_count == 175
    assert hub.breaker.trip_count == 0
    assert EventKind.HANDLED in _kinds(list(a.trace()), probe)
    sheds = [e for e in a.trace() if e.kind is EventKind.SHED]
    assert all(e.depth is not None and e.depth >= 25 for e in sheds)
    assert all(e.error == "Ignored" and e.watermark == 25 for e in sheds)
    created = [(e.hub, e.watermark) for e in a.trace() if e.kind is EventKind.HUB_CREATED]
    assert ("hub", 25) in created and ("f", 10_000) in created


def test_negative_control_without_the_watermark_nothing_is_shed() -> None:
    a = mutant_module("M4", "adapter").ReferenceAdapter()  # no aggregate shed at intake
    a.create_hub("hub", watermark=25)
    a.inject(Fault(FaultKind.BLOCK_HUB, "hub", duration_ms=1_000))
    for _ in range(200):
        a.post("f", "hub", MessageSpec("Heartbeat", MessageClass.IGNORABLE), route=Route.DIRECT)
    a.run_until_idle(60_000)
    assert a.mesh.hubs["hub"].watermark.shed_count == 0


def test_negative_control_a_class_blind_watermark_sheds_the_probe() -> None:
    a, probe = _flood_then_probe(mutant_module("M10", "adapter").ReferenceAdapter)
    kinds = _kinds(list(a.trace()), probe)
    assert EventKind.SHED in kinds and EventKind.HANDLED not in kinds


def test_report_failure_answers_once_and_only_when_may_answer_holds() -> None:
    a = ReferenceAdapter()
    mesh = a.mesh
    hub = mesh.create_hub("hub")
    mesh.create_hub("sender")
    ordinary = Delivery("r1", "sender", "gone", Message("Ping")).package()
    payload = DeliveryFailure.as_payload("x", ErrorType.FAILED)
    failure = Delivery("r2", "sender", "gone", payload).package()
    hub.report_failure(ordinary, ErrorType.NOT_FOUND)
    hub.report_failure(ordinary, ErrorType.NOT_FOUND)
    hub.report_failure(failure, ErrorType.NOT_FOUND)
    a.run_until_idle(1_000)
    trace = a.trace()
    emitted = [e for e in trace if e.kind is EventKind.FAILURE_EMITTED]
    assert [(e.answers, e.error, e.target) for e in emitted] == [("r1", "NotFound", "sender")]
    reasons = [(e.delivery_id, e.reason) for e in trace if e.kind is EventKind.ANSWER_SUPPRESSED]
    assert reasons == [("r1", "already_answered"), ("r2", "may_answer_false")]


def test_negative_control_report_failure_without_guard_answers_a_failure() -> None:
    """Mutant M8, the pre-fix reporting tail: it answers a DeliveryFailure with another."""
    messages = mutant_module("M8", "messages")
    a = mutant_module("M8", "adapter").ReferenceAdapter()
    hub = a.mesh.create_hub("hub")
    a.mesh.create_hub("sender")
    payload = messages.DeliveryFailure.as_payload("x", messages.ErrorType.FAILED)
    failure = mutant_module("M8", "envelope").Delivery("r2", "sender", "gone", payload).package()
    hub.report_failure(failure, messages.ErrorType.NOT_FOUND)
    assert [e.kind for e in a.trace()].count(EventKind.FAILURE_EMITTED) == 1


def test_direct_post_to_a_missing_target_is_answered_not_found_once() -> None:
    a = ReferenceAdapter()
    d = a.post("s", "nowhere", MessageSpec("Ping"), route=Route.DIRECT)
    f = a.post("s", "nowhere", MessageSpec("DeliveryFailure", MessageClass.FAILURE),
               route=Route.DIRECT)
    a.run_until_idle(1_000)
    emitted = [e for e in a.trace() if e.kind is EventKind.FAILURE_EMITTED]
    assert [(e.answers, e.error) for e in emitted] == [(d, "NotFound")]
    assert any(e.kind is EventKind.ANSWER_SUPPRESSED and e.delivery_id == f for e in a.trace())


def test_gated_intake_returns_gated() -> None:
    a = ReferenceAdapter()
    hub = a.mesh.create_hub("hub")
    hub.gated = True
    assert hub.offer(Delivery("d1", "s", "hub", Message("Ping"))) is Intake.GATED


def _nack_to_a_departed_sender(mesh: Any = ReferenceAdapter) -> ReferenceAdapter:
    a = mesh()
    a.create_hub("owner")
    a.post("owner", "gone", MessageSpec("Ping"))
    a.advance(1)  # the route leg answered NotFound; its NACK is on the way
    a.inject(Fault(FaultKind.REMOVE_TARGET, "owner"))
    a.run_until_idle(60_000)
    return a


def test_a_nack_to_a_departed_sender_is_never_answered() -> None:
    """Seed 001 Invariant 1: a failure to deliver a DeliveryFailure makes no new one."""
    a = _nack_to_a_departed_sender()
    emitted = [e for e in a.trace() if e.kind is EventKind.FAILURE_EMITTED]
    assert len(emitted) == 1
    suppressed = [e for e in a.trace() if e.kind is EventKind.ANSWER_SUPPRESSED]
    assert [(e.delivery_id, e.reason) for e in suppressed] == [
        (emitted[0].delivery_id, "may_answer_false")]


def test_negative_control_an_unguarded_tail_answers_the_nack() -> None:
    a = _nack_to_a_departed_sender(mutant_module("M8", "adapter").ReferenceAdapter)
    emitted = [e for e in a.trace() if e.kind is EventKind.FAILURE_EMITTED]
    assert len(emitted) == 2 and emitted[1].answers == emitted[0].delivery_id
