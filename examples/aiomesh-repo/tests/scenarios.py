"""Small programs run on aiomesh in virtual time, each returning what it measured."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from aiomesh import DeliveryFailure, Kind, Mesh, Message, Recorder
from aiomesh.breaker import COOLDOWN_MS, THRESHOLD
from aiomesh.calls import RESPONSE_TIMEOUT_MS
from aiomesh.hub import JOURNAL_BATCH
from aiomesh.legs import HOP_MS
from aiomesh.mesh import FAULTING
from aiomesh.subscribe import TIMEOUT_MS
from ordering import Pick, run

Measures = dict[str, Any]
Program = Callable[[Mesh, Recorder], Awaitable[Measures]]


def play(program: Program, *, bugs: Iterable[str] = (), pick: Pick | None = None,
         **mesh_args: Any) -> Measures:
    """Run `program` on a fresh mesh on a fresh ordering loop (as the task `program`)."""
    async def main() -> Measures:
        loop = asyncio.get_running_loop()
        notes = Recorder(lambda: round(loop.time() * 1000))
        mesh = Mesh(observer=notes, bugs=bugs, **mesh_args)
        try:
            return await asyncio.create_task(program(mesh, notes), name="program")
        finally:
            await mesh.aclose()
    return run(main(), pick)


async def ms(n: int) -> None:
    await asyncio.sleep(n / 1000)


def index(notes: Recorder, kind: str, **match: Any) -> int:
    """Where the first such note is in the record (-1: none)."""
    for i, note in enumerate(notes.notes):
        if note.kind == kind and all(note.fields.get(k) == v for k, v in match.items()):
            return i
    return -1


def _hubs(mesh: Mesh, *addresses: str) -> None:
    for address in addresses:
        mesh.hub(address)


async def rejected_post(mesh: Mesh, notes: Recorder) -> Measures:
    _hubs(mesh, "a", "b")
    d = mesh.post("a", "b", Message("Order"), identity=None, route="direct")
    await ms(100)
    return {"rejections": len(notes.of("rejected", delivery_id=d)),
            "answers": len(notes.of("failure_emitted", answers=d))}


async def failure_to_nowhere(mesh: Mesh, notes: Recorder) -> Measures:
    _hubs(mesh, "a")
    d = mesh.post("a", "nowhere", DeliveryFailure("x0", "NotFound"), identity="aiomesh")
    await ms(100)
    return {"answers": len(notes.of("failure_emitted", answers=d))}


async def heartbeat_to_nowhere(mesh: Mesh, notes: Recorder) -> Measures:
    _hubs(mesh, "a")
    routed = mesh.post("a", "nowhere", Message("Heartbeat", Kind.IGNORABLE))
    direct = mesh.post("a", "nowhere", Message("Heartbeat", Kind.IGNORABLE), route="direct")
    await ms(100)
    return {"answers": len(notes.of("failure_emitted", answers=routed)),
            "direct_answers": len(notes.of("failure_emitted", answers=direct))}


async def request_behind_a_raising_handler(mesh: Mesh, notes: Recorder) -> Measures:
    _hubs(mesh, "a", "b")
    raising = mesh.post("a", "b", Message(FAULTING), route="direct")
    behind = mesh.post("a", "b", Message("Order"), route="direct")
    await ms(100)
    return {"faulted": len(notes.of("handler_faulted", delivery_id=raising)),
            "handled_behind": len(notes.of("handled", delivery_id=behind))}


async def two_batches(mesh: Mesh, notes: Recorder) -> Measures:
    """Two journal batches' worth of messages queued at one hub in one instant."""
    _hubs(mesh, "a", "b")
    posted = [mesh.post("a", "b", Message("Order", key=f"o/{i}"), route="direct")
              for i in range(2 * JOURNAL_BATCH)]
    await ms(100)
    started = {n["delivery_id"]: n.at_ms for n in notes.of("turn_started", hub="b")}
    ended = {n["delivery_id"]: n.at_ms for n in notes.of("turn_ended", hub="b")}
    return {"turns": len(ended),
            "turns_taking_time": sum(ended[d] > started[d] for d in ended),
            "last_handled_at": notes.of("handled", delivery_id=posted[-1])[0].at_ms}


async def subscribe_to_nowhere(mesh: Mesh, notes: Recorder) -> Measures:
    _hubs(mesh, "a")
    s = mesh.subscribe("a", "nowhere", retries=3)
    await ms(60_000)
    ends = notes.of("subscribe_terminated", subscription_id=s)
    return {"attempts": len(notes.of("subscribe_attempt", subscription_id=s)),
            "end": ends[0]["reason"] if ends else None}


async def subscribe_to_slow_target(mesh: Mesh, notes: Recorder) -> Measures:
    """The target is slowed so that each request lands as its attempt times out."""
    _hubs(mesh, "a", "slow")
    mesh.slow_down("slow", TIMEOUT_MS - HOP_MS)
    s = mesh.subscribe("a", "slow", retries=3)
    await ms(60_000)
    attempts = notes.of("subscribe_attempt", subscription_id=s)
    landed = notes.of("posted", hub="slow", delivery_id=attempts[0]["delivery_id"])
    ends = notes.of("subscribe_terminated", subscription_id=s)
    return {"attempts": len(attempts), "end": ends[0]["reason"] if ends else None,
            "tie": landed[0].at_ms == attempts[0].at_ms + TIMEOUT_MS}


async def flood_blocked_hub(mesh: Mesh, notes: Recorder) -> Measures:
    _hubs(mesh, "a")
    mesh.hub("h", watermark=3)
    mesh.block("h", 1_000)
    users = {mesh.post("a", "h", Message("Order", key=f"o/{i}"), route="direct")
             for i in range(5)}
    beats = {mesh.post("a", "h", Message("Heartbeat", Kind.IGNORABLE, f"n/{i}"), route="direct")
             for i in range(5)}
    await ms(2_000)
    shed = {n["delivery_id"] for n in notes.of("shed")}
    handled = {n["delivery_id"] for n in notes.of("handled", hub="h")}
    return {"users_shed": len(shed & users), "beats_shed": len(shed & beats),
            "users_handled": len(handled & users), "beats_handled": len(handled & beats)}


async def call_times_out(mesh: Mesh, notes: Recorder) -> Measures:
    _hubs(mesh, "a", "b")
    mesh.faults.timeouts["b"] = 1
    d = mesh.post("a", "b", Message("Charge"), route="call")
    await ms(30_000)
    return {"attempts": len(notes.of("attempt", delivery_id=d)),
            "received": len(notes.of("call_received", delivery_id=d)),
            "applied": mesh.hubs["b"].effects.get(d, 0),
            "answers": len(notes.of("failure_emitted", answers=d))}


async def call_refused(mesh: Mesh, notes: Recorder) -> Measures:
    _hubs(mesh, "a", "b")
    mesh.faults.rejects["b"] = 5
    d = mesh.post("a", "b", Message("Charge"), route="call")
    await ms(30_000)
    tries = notes.of("attempt", delivery_id=d)
    fails = notes.of("attempt_failed", delivery_id=d)
    return {"attempts": len(tries), "received": len(notes.of("call_received", delivery_id=d)),
            "delays": [tries[i + 1].at_ms - fails[i].at_ms for i in range(len(tries) - 1)],
            "answers": len(notes.of("failure_emitted", answers=d))}


async def call_to_slow_target(mesh: Mesh, notes: Recorder) -> Measures:
    """The callee is slowed so that it takes each call up as the caller's wait ends."""
    _hubs(mesh, "a", "b")
    mesh.slow_down("b", RESPONSE_TIMEOUT_MS - HOP_MS)
    d = mesh.post("a", "b", Message("Charge"), route="call")
    await ms(60_000)
    received = notes.of("call_received", delivery_id=d)
    landed = notes.of("posted", hub="b", delivery_id=d)
    return {"attempts": len(notes.of("attempt", delivery_id=d)),
            "applied": mesh.hubs["b"].effects.get(d, 0),
            "tie": landed[0].at_ms == received[0].at_ms + RESPONSE_TIMEOUT_MS}


async def fan_out(mesh: Mesh, notes: Recorder) -> Measures:
    _hubs(mesh, "a", "b")
    for i in range(THRESHOLD + 1):
        mesh.post("a", "b", Message("Sync", key=f"stream/{i}"), route="direct")
    await ms(10)
    return {"dropped": len(notes.of("dropped")), "trips": len(notes.of("breaker_tripped"))}


async def post_as_cooldown_ends(mesh: Mesh, notes: Recorder) -> Measures:
    _hubs(mesh, "a", "b")
    for _ in range(THRESHOLD + 1):
        mesh.post("a", "b", Message("Sync", key="stream/1"), route="direct")
    tripped = notes.of("breaker_tripped")[0]
    await ms(COOLDOWN_MS - HOP_MS)
    d = mesh.post("a", "b", Message("Sync", key="stream/1"))  # lands as the cooldown ends
    await ms(100)
    landed = notes.of("posted", hub="b", delivery_id=d)[0]
    return {"dropped": bool(notes.of("dropped", delivery_id=d)),
            "tie": landed.at_ms == tripped.at_ms + COOLDOWN_MS}


async def stop_with_leg_in_flight(mesh: Mesh, notes: Recorder) -> Measures:
    _hubs(mesh, "a", "b")
    mesh.slow_down("b", 500)
    d = mesh.post("a", "b", Message("Order"))
    await ms(10)
    mesh.stop()
    await mesh.stopped_event()
    released = notes.of("stop_hold_released")
    return {"held": bool(notes.of("stop_hold_started")),
            "released": released[0]["reason"] if released else None,
            "landed": bool(notes.of("posted", hub="b", delivery_id=d)),
            "cut": bool(notes.of("leg_ended", delivery_id=d, reason="drained"))}


async def give_up_mid_hold(mesh: Mesh, notes: Recorder) -> Measures:
    _hubs(mesh, "a", "b")
    mesh.slow_down("b", 60_000)
    mesh.post("a", "b", Message("Order"))
    await ms(10)
    mesh.stop()
    await ms(1_000)
    mesh.stop(graceful=False)
    await mesh.stopped_event()
    started, released = notes.of("stop_hold_started")[0], notes.of("stop_hold_released")[0]
    return {"released": released["reason"], "held_ms": released.at_ms - started.at_ms}


async def answer_during_stop(mesh: Mesh, notes: Recorder) -> Measures:
    """A routed post to a missing hub fails during the hold; its answer travels back."""
    _hubs(mesh, "a")
    mesh.slow_down("nowhere", 100)
    d = mesh.post("a", "nowhere", Message("Order"))
    await ms(50)
    mesh.stop()
    await mesh.stopped_event()
    await ms(100)
    answer = notes.of("failure_emitted", answers=d)[0]["delivery_id"]
    landed = index(notes, "posted", hub="a", delivery_id=answer)
    return {"answered": landed >= 0,
            "landed_after_stop": landed > index(notes, "stop_completed")}


async def post_and_stop_at_once(mesh: Mesh, notes: Recorder) -> Measures:
    """Two tasks due at the same instant: one posts, the other asks for the stop."""
    _hubs(mesh, "a", "b")

    async def poster() -> None:
        await ms(100)
        mesh.post("a", "b", Message("Order"))

    async def host() -> None:
        await ms(100)
        mesh.stop()

    await asyncio.gather(asyncio.create_task(poster(), name="poster"),
                         asyncio.create_task(host(), name="host"))
    await mesh.stopped_event()
    await ms(100)
    leg, begun = index(notes, "leg_started"), index(notes, "stop_requested")
    return {"held": bool(notes.of("stop_hold_started")),
            "leg_after_stop_began": leg > begun,
            "landed_after_stop": index(notes, "posted", hub="b") > index(notes, "stop_completed"),
            "tie": notes.notes[leg].at_ms == notes.notes[begun].at_ms}
