"""The switchboard's own tests: on the harness's virtual loop (FIFO schedule), plus the demo
on the stock asyncio loop. Virtual time makes the 4 s and 12 s figures cost nothing."""

from __future__ import annotations

import asyncio

import pytest
from switchboard.__main__ import demo
from switchboard.errors import (
    CallRefused,
    CallTimedOut,
    NoSuchHub,
    classify,
    has_timeout,
    is_resendable,
)
from switchboard.harness_adapter import SwitchboardAdapter, make
from switchboard.parcels import Klass, Note, Parcel, from_wire, seal, to_wire

from invariants.adapter import Fault, FaultKind, FirstChooser, MessageSpec, Route
from invariants.trace import EventKind, MessageClass, TraceEvent

REQUEST = MessageSpec("Request")
HEARTBEAT = MessageSpec("Heartbeat", MessageClass.IGNORABLE)


@pytest.fixture
def board() -> SwitchboardAdapter:
    mesh = make(FirstChooser())
    for hub in ("h0", "h1"):
        mesh.create_hub(hub)
    return mesh


def of(mesh: SwitchboardAdapter, kind: EventKind, **match: object) -> list[TraceEvent]:
    return [e for e in mesh.trace()
            if e.kind is kind and all(getattr(e, k) == v for k, v in match.items())]


def test_a_direct_post_is_served_where_it_was_posted(board: SwitchboardAdapter) -> None:
    first = board.post("client", "h0", REQUEST, route=Route.DIRECT)
    second = board.post("client", "h0", REQUEST, route=Route.DIRECT)
    board.advance(1)
    assert [e.delivery_id for e in of(board, EventKind.HANDLED, hub="h0")] == [first, second]


def test_an_anonymous_post_is_refused_once_and_never_answered(board: SwitchboardAdapter) -> None:
    anonymous = board.post("client", "h0", REQUEST, identity=None)
    board.run_until_idle(60_000)
    assert len(of(board, EventKind.REJECTED, delivery_id=anonymous)) == 1
    assert of(board, EventKind.FAILURE_EMITTED) == []
    assert of(board, EventKind.HANDLED, delivery_id=anonymous) == []


def test_a_missing_target_is_answered_once_but_a_heartbeat_never(board: SwitchboardAdapter) -> None:
    request = board.post("peer", "nowhere", REQUEST)
    heartbeat = board.post("peer", "nowhere", HEARTBEAT)
    board.run_until_idle(60_000)
    answers = of(board, EventKind.FAILURE_EMITTED)
    assert [(e.answers, e.error) for e in answers] == [(request, "NotFound")]
    assert of(board, EventKind.ANSWER_SUPPRESSED, delivery_id=heartbeat)[0].reason == (
        "may_answer_false")
    assert of(board, EventKind.HANDLED, hub="peer", delivery_id=answers[0].delivery_id)


def test_the_no_reply_header_survives_the_wire() -> None:
    heartbeat = Parcel("p1", "a", "b", "user", Note("Heartbeat", Klass.CHATTER))
    request = Parcel("p2", "a", "b", "user", Note("Request"))
    assert not from_wire(to_wire(seal(heartbeat))).answerable()
    assert from_wire(to_wire(seal(request))).answerable()


def test_a_timed_out_call_is_sent_once_and_answered_as_terminal(
        board: SwitchboardAdapter) -> None:
    board.inject(Fault(FaultKind.TIMEOUT_NEXT, "h1"))
    call = board.post("peer", "h1", REQUEST, route=Route.GRAIN)
    board.run_until_idle(60_000)
    assert len(of(board, EventKind.ATTEMPT, delivery_id=call)) == 1
    assert len(of(board, EventKind.CALL_RECEIVED, delivery_id=call)) == 1
    failed = of(board, EventKind.ATTEMPT_FAILED, delivery_id=call)
    assert [e.timed_out for e in failed] == [True]
    answer = of(board, EventKind.FAILURE_EMITTED, answers=call)
    assert [e.error for e in answer] == ["Failed"]
    ran = of(board, EventKind.POSTED, hub="h1", delivery_id=call)
    assert ran and ran[0].time_ms > failed[0].time_ms  # the callee still ran it, afterwards


def test_a_refused_call_is_resent_until_its_budget_is_spent(board: SwitchboardAdapter) -> None:
    board.inject(Fault(FaultKind.REJECT_NEXT, "h1", count=100))
    call = board.post("peer", "h1", REQUEST, route=Route.GRAIN)
    board.run_until_idle(60_000)
    attempts = [e.time_ms for e in of(board, EventKind.ATTEMPT, delivery_id=call)]
    failures = [e.time_ms for e in of(board, EventKind.ATTEMPT_FAILED, delivery_id=call)]
    assert len(attempts) == 5  # 4 retries
    assert [a - f for a, f in zip(attempts[1:], failures, strict=False)] == [100, 200, 400, 600]
    assert of(board, EventKind.CALL_RECEIVED, delivery_id=call) == []
    assert [e.error for e in of(board, EventKind.FAILURE_EMITTED, answers=call)] == [
        "Unavailable"]


@pytest.mark.parametrize("timeout_first", [True, False])
def test_a_timeout_anywhere_in_a_group_is_never_resent(timeout_first: bool) -> None:
    members = [CallTimedOut(), CallRefused()]
    group = ExceptionGroup("both", members if timeout_first else members[::-1])
    assert has_timeout(group) and not is_resendable(group)
    assert classify(group) == "Failed"
    assert is_resendable(CallRefused()) and not is_resendable(NoSuchHub())


def test_a_subscription_to_a_missing_hub_ends_after_its_retries(board: SwitchboardAdapter) -> None:
    sub = board.subscribe("client", "ghost", retries=3)
    board.run_until_idle(60_000)
    attempts = of(board, EventKind.SUBSCRIBE_ATTEMPT, subscription_id=sub)
    ended = of(board, EventKind.SUBSCRIBE_TERMINATED, subscription_id=sub)
    assert len(attempts) == 4
    assert [e.reason for e in ended] == ["retries_exhausted:NotFound"]
    assert attempts[-1].seq < ended[0].seq


def test_a_subscription_to_a_live_hub_is_answered(board: SwitchboardAdapter) -> None:
    sub = board.subscribe("client", "h0")
    board.run_until_idle(60_000)
    assert of(board, EventKind.SUBSCRIBE_ANSWERED, subscription_id=sub)
    assert of(board, EventKind.SUBSCRIBE_TERMINATED, subscription_id=sub) == []


@pytest.mark.parametrize("graceful", [True, False])
def test_a_graceful_stop_holds_for_a_slow_leg(board: SwitchboardAdapter, graceful: bool) -> None:
    board.inject(Fault(FaultKind.SLOW_DESTINATION, "h1", duration_ms=5000))
    routed = board.post("peer", "h1", REQUEST)
    board.stop(graceful=graceful)
    board.run_until_idle(60_000)
    left = of(board, EventKind.STOP_STAGE_LEFT, stage=30)[0]
    legs = of(board, EventKind.LEG_ENDED, delivery_id=routed)
    if graceful:
        assert left.time_ms == 5002 and legs[0].reason == "completed"
    else:
        assert left.time_ms == 0 and legs[0].reason == "drained"
    assert of(board, EventKind.STOP_COMPLETED)


def test_a_post_after_the_stop_is_refused_and_answered_shutting_down(
        board: SwitchboardAdapter) -> None:
    board.stop()
    routed = board.post("peer", "h0", REQUEST)
    board.run_until_idle(60_000)
    assert of(board, EventKind.DISPATCH_REFUSED, delivery_id=routed)
    assert [e.error for e in of(board, EventKind.FAILURE_EMITTED, answers=routed)] == [
        "ShuttingDown"]
    assert of(board, EventKind.LEG_STARTED, delivery_id=routed) == []


def test_a_wide_fanout_is_kept_and_a_storm_is_stopped() -> None:
    mesh = make(FirstChooser())
    mesh.create_hub("h0", breaker_threshold=8)
    for n in range(20):
        mesh.post("importer", "h0", MessageSpec("Create", diagnostic_key=f"node/{n}"),
                  route=Route.DIRECT)
    for _ in range(9):
        mesh.post("owner", "h0", MessageSpec("Update", diagnostic_key="stream/1"),
                  route=Route.DIRECT)
    mesh.run_until_idle(60_000)
    dropped = of(mesh, EventKind.DROPPED)
    assert len(dropped) == 1 and len(of(mesh, EventKind.BREAKER_TRIPPED)) == 1
    assert dropped[0].delivery_id == of(mesh, EventKind.POSTED, hub="h0")[-1].delivery_id


def test_past_the_watermark_only_chatter_is_shed() -> None:
    mesh = make(FirstChooser())
    mesh.create_hub("h0", watermark=4)
    mesh.inject(Fault(FaultKind.BLOCK_HUB, "h0", duration_ms=1000))
    for n in range(10):
        mesh.post("client", "h0", MessageSpec("Heartbeat", MessageClass.IGNORABLE, f"k{n}"),
                  route=Route.DIRECT)
    probe = mesh.post("client", "h0", REQUEST, route=Route.DIRECT)
    mesh.run_until_idle(60_000)
    assert len(of(mesh, EventKind.SHED)) == 6
    handled = of(mesh, EventKind.HANDLED, delivery_id=probe)
    assert handled and handled[0].time_ms == 1000


def test_the_demo_runs_on_the_stock_loop() -> None:
    events = asyncio.run(demo())
    assert events["stopped"] == 1 and events["sub_ok"] == 1 and events["sub_gave_up"] == 1
