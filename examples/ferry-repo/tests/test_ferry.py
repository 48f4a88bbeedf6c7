"""Ferry's own tests: the mesh on the simulated network, FIFO, driven through its adapter."""
from __future__ import annotations

import asyncio

from ferry import wire
from ferry.harness_adapter import make

from invariants.adapter import FirstChooser, MessageSpec, Route
from invariants.trace import EventKind


def kinds(mesh, kind, **match):
    return [e for e in mesh.trace() if e.kind is kind
            and all(getattr(e, k) == v for k, v in match.items())]


def fresh():
    mesh = make(FirstChooser())
    for hub in ("h0", "h1", "h2"):
        mesh.create_hub(hub)
    mesh.advance(50)
    return mesh


def test_frames_round_trip():
    async def go():
        reader = asyncio.StreamReader()
        reader.feed_data(wire.encode({"op": "x", "n": 1}) + wire.encode({"op": "y"}))
        reader.feed_eof()
        return [await wire.read_frame(reader) for _ in range(3)]
    assert asyncio.run(go()) == [{"n": 1, "op": "x"}, {"op": "y"}, None]


def test_routed_post_crosses_the_broker_and_is_handled():
    mesh = fresh()
    d = mesh.post("client", "h1", MessageSpec("Note"))
    mesh.advance(100)
    assert kinds(mesh, EventKind.HANDLED, delivery_id=d)
    assert kinds(mesh, EventKind.LEG_ENDED, delivery_id=d, reason="completed")


def test_post_to_missing_hub_is_answered_once():
    mesh = fresh()
    d = mesh.post("client", "nowhere", MessageSpec("Note"))
    mesh.advance(100)
    answers = kinds(mesh, EventKind.FAILURE_EMITTED, answers=d)
    assert [a.error for a in answers] == ["NotFound"]


def test_anonymous_post_is_rejected_and_not_answered():
    mesh = fresh()
    d = mesh.post("client", "h0", MessageSpec("Note"), identity=None, route=Route.DIRECT)
    mesh.advance(10)
    assert kinds(mesh, EventKind.REJECTED, delivery_id=d)
    assert not kinds(mesh, EventKind.FAILURE_EMITTED, answers=d)


def test_subscription_to_missing_target_is_bounded():
    mesh = fresh()
    s = mesh.subscribe("client", "ghost", retries=2)
    assert mesh.run_until_idle(600_000)
    assert len(kinds(mesh, EventKind.SUBSCRIBE_ATTEMPT, subscription_id=s)) == 3
    assert kinds(mesh, EventKind.SUBSCRIBE_TERMINATED, subscription_id=s)


def test_graceful_stop_holds_for_legs_in_flight():
    mesh = fresh()
    mesh.post("client", "h2", MessageSpec("Note"))
    mesh.stop(graceful=True)
    assert mesh.run_until_idle(600_000)
    assert kinds(mesh, EventKind.STOP_COMPLETED)
    held = kinds(mesh, EventKind.STOP_HOLD_STARTED)
    assert all(e.kind is not EventKind.LEG_STARTED for e in mesh.trace()[-3:])
    assert held or kinds(mesh, EventKind.DISPATCH_REFUSED)


def test_a_crashed_node_is_rebuilt_and_serves_again():
    mesh = fresh()
    node = mesh.node_of("h1")
    mesh.network.crash(node)
    mesh.advance(500)
    mesh.network.restart(node)
    mesh.restart_node(node)
    mesh.advance(500)
    d = mesh.post("client", "h1", MessageSpec("Note"))
    mesh.advance(200)
    assert kinds(mesh, EventKind.HANDLED, delivery_id=d)
