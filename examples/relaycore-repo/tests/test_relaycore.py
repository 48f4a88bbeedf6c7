"""relaycore's own tests, on the harness's virtual loop (FIFO schedule): no wall-clock waits."""

from __future__ import annotations

import pytest
from invariants.adapter import Fault, FaultKind, FirstChooser, MessageSpec, Route
from invariants.trace import EventKind, MessageClass, TraceEvent

from relaycore import harness_adapter
from relaycore.__main__ import main
from relaycore.harness_adapter import RelayAdapter, make
from relaycore.relay import KNOWN_BUGS


def kinds(mesh: RelayAdapter, kind: EventKind) -> list[TraceEvent]:
    return [e for e in mesh.trace() if e.kind is kind]


def test_a_post_without_identity_is_rejected_once_and_never_answered() -> None:
    mesh = make(FirstChooser())
    mesh.create_hub("orders")
    fid = mesh.post("shop", "orders", MessageSpec("PlaceOrder"), identity=None)
    mesh.run_until_idle(60_000)
    assert [e.delivery_id for e in kinds(mesh, EventKind.REJECTED)] == [fid]
    assert kinds(mesh, EventKind.FAILURE_EMITTED) == []
    assert kinds(mesh, EventKind.HANDLED) == []


def test_a_failure_notice_that_cannot_be_routed_is_not_answered() -> None:
    mesh = make(FirstChooser())
    fid = mesh.post("shop", "gone", MessageSpec("Undeliverable", MessageClass.FAILURE))
    mesh.run_until_idle(60_000)
    suppressed = kinds(mesh, EventKind.ANSWER_SUPPRESSED)
    assert [(e.delivery_id, e.reason) for e in suppressed] == [(fid, "may_answer_false")]
    assert kinds(mesh, EventKind.FAILURE_EMITTED) == []


def test_an_ordinary_post_to_a_missing_node_is_answered_once_after_a_wire_round_trip() -> None:
    mesh = make(FirstChooser())
    mesh.set_envelope_roundtrip(True)
    fid = mesh.post("shop", "gone", MessageSpec("PlaceOrder"))
    mesh.run_until_idle(60_000)
    answers = kinds(mesh, EventKind.FAILURE_EMITTED)
    assert [(e.answers, e.error) for e in answers] == [(fid, "NotFound")]
    landed = [e for e in kinds(mesh, EventKind.POSTED) if e.delivery_id == answers[0].delivery_id]
    assert [e.hub for e in landed] == ["shop"]


def test_the_breaker_stops_a_storm_but_keeps_a_fan_out() -> None:
    mesh = make(FirstChooser())
    mesh.create_hub("cache", breaker_threshold=3)
    storm = [mesh.post("owner", "cache", MessageSpec("Sync", diagnostic_key="s/1"),
                       route=Route.DIRECT) for _ in range(4)]
    fanout = [mesh.post("owner", "cache", MessageSpec("Sync", diagnostic_key=f"s/{n}"),
                        route=Route.DIRECT) for n in range(2, 12)]
    mesh.advance(1)
    assert [e.delivery_id for e in kinds(mesh, EventKind.DROPPED)] == storm[3:]
    assert [e.delivery_id for e in kinds(mesh, EventKind.BREAKER_TRIPPED)] == storm[3:]
    handled = {e.delivery_id for e in kinds(mesh, EventKind.HANDLED)}
    assert set(fanout) <= handled


def test_the_watermark_sheds_only_ignorable_traffic() -> None:
    mesh = make(FirstChooser())
    mesh.create_hub("hub", watermark=2)
    mesh.inject(Fault(FaultKind.BLOCK_HUB, "hub", duration_ms=1000))
    beats = [mesh.post("peer", "hub", MessageSpec("Heartbeat", MessageClass.IGNORABLE,
                                                   diagnostic_key=f"b{n}"), route=Route.DIRECT)
             for n in range(4)]
    probes = [mesh.post("peer", "hub", MessageSpec("Probe"), route=Route.DIRECT)
              for _ in range(3)]
    mesh.advance(1)
    assert [e.delivery_id for e in kinds(mesh, EventKind.SHED)] == beats[2:]
    assert kinds(mesh, EventKind.HANDLED) == []  # the turn is held
    mesh.advance(1000)
    handled = [e.delivery_id for e in kinds(mesh, EventKind.HANDLED)]
    assert handled == beats[:2] + probes


def test_a_watch_on_a_missing_node_gives_up_after_its_retries() -> None:
    mesh = make(FirstChooser())
    sid = mesh.subscribe("client", "ghost", retries=2)
    mesh.run_until_idle(600_000)
    attempts = [e.time_ms for e in kinds(mesh, EventKind.SUBSCRIBE_ATTEMPT)]
    assert attempts == [0, 2 + 200, 2 + 200 + 2 + 400]  # a 2 ms hop, then 200 ms doubling
    [end] = kinds(mesh, EventKind.SUBSCRIBE_TERMINATED)
    assert (end.subscription_id, end.reason) == (sid, "retries_exhausted:NotFound")


def test_a_watch_closed_by_a_stop_in_its_first_instant_sends_nothing_more() -> None:
    # The refusal lands before the stop cancels the watch's task: `wait_for` returns it and
    # swallows the cancel (Python 3.11), so the watch must see that it was closed.
    mesh = make(FirstChooser())
    sid = mesh.subscribe("client", "ghost", retries=5)
    mesh.stop(graceful=True)
    mesh.run_until_idle(600_000)
    [end] = kinds(mesh, EventKind.SUBSCRIBE_TERMINATED)
    assert (end.subscription_id, end.reason) == (sid, "silo_stopped")
    attempts = [e.seq for e in kinds(mesh, EventKind.SUBSCRIBE_ATTEMPT)]
    assert attempts and max(attempts) < end.seq


def test_a_refused_call_is_re_sent_and_a_timed_out_one_is_not() -> None:
    mesh = make(FirstChooser())
    mesh.create_hub("billing")
    mesh.inject(Fault(FaultKind.REJECT_NEXT, "billing", count=100))
    refused = mesh.post("shop", "billing", MessageSpec("Charge"), route=Route.GRAIN)
    mesh.run_until_idle(600_000)
    calls = [e for e in kinds(mesh, EventKind.ATTEMPT) if e.delivery_id == refused]
    assert [e.time_ms for e in calls] == [0, 100, 300, 700, 1500, 2500]  # capped at 1 s
    mesh = make(FirstChooser())
    mesh.create_hub("billing")
    mesh.inject(Fault(FaultKind.TIMEOUT_NEXT, "billing"))
    held = mesh.post("shop", "billing", MessageSpec("Charge"), route=Route.GRAIN)
    mesh.run_until_idle(600_000)
    assert len(kinds(mesh, EventKind.ATTEMPT)) == 1
    [failed] = kinds(mesh, EventKind.ATTEMPT_FAILED)
    assert (failed.delivery_id, failed.timed_out, failed.time_ms) == (held, True, 8000)
    [answer] = kinds(mesh, EventKind.FAILURE_EMITTED)
    assert answer.error == "Failed"
    assert [e.hub for e in kinds(mesh, EventKind.HANDLED) if e.delivery_id == held] == ["billing"]


def test_a_graceful_stop_holds_until_the_legs_in_flight_land() -> None:
    mesh = make(FirstChooser())
    mesh.create_hub("slow")
    mesh.inject(Fault(FaultKind.SLOW_DESTINATION, "slow", duration_ms=5000))
    mesh.post("shop", "slow", MessageSpec("Order"))
    mesh.advance(1)
    mesh.stop(graceful=True)
    mesh.run_until_idle(600_000)
    [released] = kinds(mesh, EventKind.STOP_HOLD_RELEASED)
    assert (released.reason, released.time_ms) == ("drained", 5002)
    deactivation = [e for e in kinds(mesh, EventKind.STOP_STAGE_ENTERED) if e.stage == 60]
    assert [e.depth for e in deactivation] == [0]
    refused = mesh.post("shop", "slow", MessageSpec("Late"))
    mesh.run_until_idle(600_000)
    assert [e.delivery_id for e in kinds(mesh, EventKind.DISPATCH_REFUSED)] == [refused]


def test_a_non_graceful_stop_holds_nothing() -> None:
    mesh = make(FirstChooser())
    mesh.create_hub("slow")
    mesh.inject(Fault(FaultKind.SLOW_DESTINATION, "slow", duration_ms=5000))
    mesh.post("shop", "slow", MessageSpec("Order"))
    mesh.advance(1)
    mesh.stop(graceful=False)
    mesh.advance(1)
    assert kinds(mesh, EventKind.STOP_HOLD_STARTED) == []
    [ended] = kinds(mesh, EventKind.LEG_ENDED)
    assert ended.reason == "drained"
    assert len(kinds(mesh, EventKind.STOP_COMPLETED)) == 1


def test_the_demo_runs_on_the_stock_event_loop() -> None:
    assert main(["demo"]) == 0


def test_the_relay_under_test_has_every_switch_off_and_each_factory_one_on() -> None:
    assert make(FirstChooser()).relay.bugs == frozenset()
    for name in sorted(KNOWN_BUGS):
        mesh = getattr(harness_adapter, f"bug_{name}")(FirstChooser())
        assert mesh.relay.bugs == {name}
    with pytest.raises(ValueError, match="unknown bug switch"):
        RelayAdapter(FirstChooser(), bugs={"b99"})
