"""Pigeon's own tests: the nodes on the simulated network, FIFO schedule, virtual time."""

from __future__ import annotations

from pigeon.harness_adapter import make
from pigeon.hub import StormBreaker
from pigeon.settings import Settings

from invariants.adapter import Fault, FaultKind, FirstChooser, MessageSpec, Route
from invariants.trace import EventKind, MessageClass


def kinds(mesh, kind, **match):
    return [e for e in mesh.trace() if e.kind is kind
            and all(getattr(e, k) == v for k, v in match.items())]


def mesh_with(*hubs):
    mesh = make(FirstChooser())
    for hub in hubs:
        mesh.create_hub(hub)
    return mesh


def test_hubs_are_spread_over_three_nodes():
    mesh = mesh_with("a", "b", "c")
    assert sorted(mesh.node_of(h) for h in ("a", "b", "c")) == ["n1", "n2", "n3"]


def test_a_routed_post_crosses_nodes_and_is_handled():
    mesh = mesh_with("a", "b", "c")
    d = mesh.post("a", "b", MessageSpec("Ping"))
    assert mesh.run_until_idle(60_000)
    assert [e.hub for e in kinds(mesh, EventKind.HANDLED, delivery_id=d)] == ["b"]
    ends = kinds(mesh, EventKind.LEG_ENDED, delivery_id=d)
    assert [e.reason for e in ends] == ["completed"]


def test_a_post_to_a_missing_hub_is_answered_once():
    mesh = mesh_with("a", "b", "c")
    d = mesh.post("a", "nowhere", MessageSpec("Ping"))
    assert mesh.run_until_idle(60_000)
    answers = kinds(mesh, EventKind.FAILURE_EMITTED, answers=d)
    assert [e.error for e in answers] == ["NotFound"]
    assert kinds(mesh, EventKind.HANDLED, delivery_id=answers[0].delivery_id)[0].hub == "a"


def test_a_heartbeat_that_fails_is_not_answered():
    mesh = mesh_with("a")
    d = mesh.post("a", "nowhere", MessageSpec("Beat", MessageClass.IGNORABLE))
    assert mesh.run_until_idle(60_000)
    assert not kinds(mesh, EventKind.FAILURE_EMITTED, answers=d)
    assert kinds(mesh, EventKind.ANSWER_SUPPRESSED, delivery_id=d)


def test_an_anonymous_post_is_rejected_once_and_not_answered():
    mesh = mesh_with("a", "b")
    d = mesh.post("a", "b", MessageSpec("Ping"), identity=None)
    assert mesh.run_until_idle(60_000)
    assert len(kinds(mesh, EventKind.REJECTED, delivery_id=d)) == 1
    assert not kinds(mesh, EventKind.FAILURE_EMITTED, answers=d)


def test_a_refused_call_is_resent_then_answered_unavailable():
    mesh = mesh_with("a", "b")
    mesh.inject(Fault(FaultKind.REJECT_NEXT, "b", count=100))
    d = mesh.post("a", "b", MessageSpec("Get"), route=Route.GRAIN)
    assert mesh.run_until_idle(60_000)
    attempts = kinds(mesh, EventKind.ATTEMPT, delivery_id=d)
    assert len(attempts) == Settings().delivery_retries + 1
    assert [e.error for e in kinds(mesh, EventKind.FAILURE_EMITTED, answers=d)] == [
        "Unavailable"]
    assert not kinds(mesh, EventKind.CALL_RECEIVED, delivery_id=d)


def test_a_timed_out_call_is_not_resent_and_still_runs_once():
    mesh = mesh_with("a", "b")
    mesh.inject(Fault(FaultKind.TIMEOUT_NEXT, "b"))
    d = mesh.post("a", "b", MessageSpec("Get"), route=Route.GRAIN)
    assert mesh.run_until_idle(60_000)
    assert len(kinds(mesh, EventKind.ATTEMPT, delivery_id=d)) == 1
    failed = kinds(mesh, EventKind.ATTEMPT_FAILED, delivery_id=d)
    assert failed[0].timed_out is True
    assert len(kinds(mesh, EventKind.CALL_RECEIVED, delivery_id=d)) == 1
    handled = kinds(mesh, EventKind.HANDLED, delivery_id=d)
    assert handled and handled[0].seq > failed[0].seq


def test_a_lost_datagram_is_retransmitted():
    mesh = mesh_with("a", "b")
    mesh.advance(10)
    mesh.inject(Fault(FaultKind.PARTITION_NODE, "b", duration_ms=300))
    d = mesh.post("a", "b", MessageSpec("Ping"))
    assert mesh.run_until_idle(60_000)
    assert kinds(mesh, EventKind.HANDLED, delivery_id=d, hub="b")


def test_a_crashed_node_is_rebuilt():
    mesh = mesh_with("a", "b")
    mesh.advance(10)
    mesh.inject(Fault(FaultKind.CRASH_NODE, "b", duration_ms=500))
    mesh.advance(600)
    d = mesh.post("a", "b", MessageSpec("Ping"))
    assert mesh.run_until_idle(60_000)
    assert kinds(mesh, EventKind.HANDLED, delivery_id=d, hub="b")


def test_a_subscription_to_a_missing_hub_ends_after_its_retries():
    mesh = mesh_with("a")
    s = mesh.subscribe("a", "ghost", retries=2)
    assert mesh.run_until_idle(600_000)
    assert len(kinds(mesh, EventKind.SUBSCRIBE_ATTEMPT, subscription_id=s)) == 3
    ends = kinds(mesh, EventKind.SUBSCRIBE_TERMINATED, subscription_id=s)
    assert len(ends) == 1 and ends[0].reason.startswith("retries_exhausted")


def test_a_graceful_stop_holds_for_a_slow_leg():
    mesh = mesh_with("a", "b")
    mesh.inject(Fault(FaultKind.SLOW_DESTINATION, "b", duration_ms=3000))
    d = mesh.post("a", "b", MessageSpec("Ping"))
    mesh.advance(5)
    mesh.stop(graceful=True)
    assert mesh.run_until_idle(60_000)
    released = kinds(mesh, EventKind.STOP_HOLD_RELEASED)
    assert [e.reason for e in released] == ["drained"]
    assert kinds(mesh, EventKind.HANDLED, delivery_id=d)
    assert kinds(mesh, EventKind.STOP_COMPLETED)


def test_the_breaker_opens_windows_at_a_keys_first_post():
    breaker = StormBreaker(2, Settings())
    key = ("a", "b", "T", None)
    assert [breaker.admit(key, t) for t in (0, 0, 0)] == ["ok", "ok", "trip"]
    assert breaker.admit(key, 1499) == "shut"
    assert breaker.admit(key, 1500) == "ok"
