"""Legs: routed work in flight, each a task, counted from dispatch until it lands.

A `route` leg carries a packaged envelope to its target hub (or, for a call, through the
call ladder of `aiomesh.calls`); a `nack` leg carries a DeliveryFailure back to the
sender. The in-flight count is what a graceful stop waits on. From the stop's first
step nothing new is dispatched: the dispatch is refused as ShuttingDown.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from aiomesh.envelope import Envelope, RawJson, package

if TYPE_CHECKING:
    from aiomesh.mesh import Mesh

HOP_MS = 1  # one hop between hubs
HIGH_MARK, LOW_MARK = 64, 32  # the in-flight count logged as saturated, and cleared


@dataclass
class Leg:
    id: str
    kind: str  # "route" | "nack"
    env: Envelope  # packaged
    message_type: str
    message_class: str
    call: bool = False
    task: asyncio.Task[None] | None = field(default=None, repr=False)


class Legs:
    def __init__(self, mesh: Mesh) -> None:
        self.mesh = mesh
        self.in_flight: dict[str, Leg] = {}  # oldest first
        self.slow: dict[str, int] = {}  # extra ms to reach a target
        self.tasks: set[asyncio.Task[None]] = set()
        self._saturated = False
        self.timers: set[asyncio.TimerHandle] = set()  # the detached-nack bug's timers
        self.cut_off = False  # the stop has cut what was in flight: nothing new travels

    def delay_ms(self, target: str) -> int:
        return HOP_MS + self.slow.get(target, 0)

    def dispatch(self, env: Envelope, *, call: bool = False) -> None:
        mesh, body = self.mesh, env.body
        assert not isinstance(body, RawJson)
        if mesh.closing:
            mesh.observer.dispatch_refused(
                hub="calls" if call else "router", delivery_id=env.id, sender=env.sender,
                target=env.target, message_type=body.type_name, message_class=body.kind,
                diagnostic_key=body.key, packaged=False, error="ShuttingDown")
            mesh.answers.report(env, "ShuttingDown")
            return
        body = env.body
        assert not isinstance(body, RawJson)
        leg = Leg(mesh.new_id("leg"), "route", package(env), body.type_name, body.kind, call)
        if "leg-registers-late" in mesh.bugs:
            self._start(leg, self._late(leg))
            return
        self._open(leg)
        self._start(leg, self._route(leg))

    def send_back(self, answer: Envelope) -> None:
        """A failure answer travels back to its target (the original sender) as a leg;
        once the stop has cut the legs, straight to the sender's intake (a leg started
        then would land after the stop completed)."""
        mesh = self.mesh
        if self.cut_off:
            if (hub := mesh.hubs.get(answer.target)) is not None:
                hub.offer(package(answer))
            return
        if "detached-nack" in mesh.bugs:
            timer = mesh.loop.call_later(mesh.seconds(HOP_MS), self._land_detached,
                                         package(answer))
            self.timers.add(timer)  # not a leg: the stop neither waits for it nor cuts it
            return
        leg = Leg(mesh.new_id("leg"), "nack", package(answer), "DeliveryFailure", "failure")
        self._open(leg)
        self._start(leg, self._return(leg))

    def _land_detached(self, env: Envelope) -> None:
        if (hub := self.mesh.hubs.get(env.target)) is not None:
            hub.offer(env)

    def _start(self, leg: Leg, work: object) -> None:
        leg.task = self.mesh.loop.create_task(work, name=leg.id)  # type: ignore[arg-type]
        self.tasks.add(leg.task)
        leg.task.add_done_callback(self.tasks.discard)

    def _open(self, leg: Leg) -> None:
        self.in_flight[leg.id] = leg
        env = leg.env
        self.mesh.observer.leg_started(
            hub="calls" if leg.call else "router", leg_id=leg.id, leg_kind=leg.kind,
            delivery_id=env.id, depth=len(self.in_flight), sender=env.sender,
            target=env.target, message_type=leg.message_type,
            message_class=leg.message_class, packaged=True,
            subscription_id=env.subscription)
        if not self._saturated and len(self.in_flight) >= HIGH_MARK:
            self._saturated = True
            self.mesh.observer.saturation_logged(hub="router", depth=len(self.in_flight))

    def _close(self, leg: Leg, reason: str) -> None:
        if self.in_flight.pop(leg.id, None) is None:
            return
        self.mesh.observer.leg_ended(
            hub="calls" if leg.call else "router", leg_id=leg.id, leg_kind=leg.kind,
            delivery_id=leg.env.id, depth=len(self.in_flight), reason=reason)
        if self._saturated and len(self.in_flight) <= LOW_MARK:
            self._saturated = False
            self.mesh.observer.saturation_cleared(hub="router", depth=len(self.in_flight))
        if not self.in_flight:
            self.mesh.shutdown.drained()

    async def _late(self, leg: Leg) -> None:
        self._open(leg)
        await self._route(leg)

    async def _route(self, leg: Leg) -> None:
        reason = "drained"
        try:
            if leg.call:
                reason = await self.mesh.calls.deliver(leg.env)
            else:
                reason = await self._carry(leg.env)
        finally:
            self._close(leg, reason)

    async def _carry(self, env: Envelope) -> str:
        await asyncio.sleep(self.mesh.seconds(self.delay_ms(env.target)))
        hub = self.mesh.hubs.get(env.target)
        if hub is None:
            self.mesh.answers.report(env, "NotFound")
            return "failed"
        hub.offer(env)
        return "completed"

    async def _return(self, leg: Leg) -> None:
        reason = "drained"
        try:
            await asyncio.sleep(self.mesh.seconds(HOP_MS))
            hub = self.mesh.hubs.get(leg.env.target)
            if hub is None:
                self.mesh.answers.report(leg.env, "NotFound")  # suppressed: an answer
                reason = "failed"
            else:
                hub.offer(leg.env)
                reason = "completed"
        finally:
            self._close(leg, reason)

    async def cut(self) -> None:
        """The stop's detaching stage: whatever is still in flight will not land."""
        self.cut_off = True
        tasks = [leg.task for leg in self.in_flight.values() if leg.task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for leg in list(self.in_flight.values()):  # a leg whose task never ran
            self._close(leg, "drained")

    def close(self) -> None:
        for timer in self.timers:
            timer.cancel()
        for task in list(self.tasks):
            task.cancel()
