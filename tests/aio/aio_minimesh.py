"""A small mesh of ordinary asyncio code, and its adapter built on invariants.aio's kit.

The mesh runs on a stock loop as it is (the trace calls and fault points are no-ops there);
under `MiniAdapter` its trace is the harness's and its grain calls meet the armed faults.
Hubs are a queue and a pump task; a routed post takes a 1 ms hop; a grain call is
attempted up to three times and waits for its reply under `asyncio.timeout`.
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass, replace

from invariants.adapter import Capability, Chooser, FaultKind, MessageSpec, Route
from invariants.aio import AsyncMeshAdapter, emit, point, removed, turn
from invariants.trace import MessageClass

REPLY_TIMEOUT_S = 1.0
HOP_S = 0.001


@dataclass(frozen=True)
class Delivery:
    id: str
    sender: str
    target: str
    spec: MessageSpec
    identity: str | None
    packaged: bool = False


class Hub:
    def __init__(self, address: str, watermark: int) -> None:
        self.address = address
        self.watermark = watermark
        self.queue: asyncio.Queue[Delivery] = asyncio.Queue()
        self.handled: list[str] = []

    async def pump(self) -> None:
        while True:
            delivery = await self.queue.get()
            await turn(self.address)
            emit.handled(hub=self.address, delivery_id=delivery.id,
                         message_type=delivery.spec.type_name)
            self.handled.append(delivery.id)


class MiniMesh:
    def __init__(self) -> None:
        self.hubs: dict[str, Hub] = {}
        self._ids = itertools.count(1)
        self._legs = itertools.count(1)

    def new_id(self, prefix: str = "d") -> str:
        return f"{prefix}{next(self._ids)}"

    def add_hub(self, address: str, watermark: int = 100) -> Hub:
        hub = self.hubs[address] = Hub(address, watermark)
        emit.hub_created(hub=address, watermark=watermark)
        return hub

    async def deliver(self, delivery: Delivery, route: Route) -> None:
        if route is Route.DIRECT:
            self.offer(delivery)
        elif route is Route.MONOLITH:
            await self.hop(delivery)
        else:
            await self.grain_call(delivery)

    def offer(self, delivery: Delivery) -> None:
        spec = delivery.spec
        hub = self.hubs.get(delivery.target)
        if hub is None or removed(delivery.target):
            self.answer(delivery, "NotFound")
            return
        emit.posted(hub=hub.address, delivery_id=delivery.id, sender=delivery.sender,
                    target=delivery.target, message_type=spec.type_name,
                    message_class=spec.message_class, diagnostic_key=spec.diagnostic_key,
                    packaged=delivery.packaged)
        if delivery.identity is None and spec.message_class is not MessageClass.SYSTEM:
            emit.rejected(hub=hub.address, delivery_id=delivery.id)
        elif spec.message_class.sheddable and hub.queue.qsize() >= hub.watermark:
            emit.shed(hub=hub.address, delivery_id=delivery.id, depth=hub.queue.qsize(),
                      watermark=hub.watermark, error="Ignored")
        else:
            hub.queue.put_nowait(delivery)
            emit.enqueued(hub=hub.address, delivery_id=delivery.id, depth=hub.queue.qsize())

    def answer(self, delivery: Delivery, error: str) -> None:
        spec = delivery.spec
        if spec.message_class.suppresses_answer:
            emit.answer_suppressed(delivery_id=delivery.id, reason="may_answer_false",
                                   message_class=spec.message_class,
                                   packaged=delivery.packaged)
            return
        emit.failure_emitted(hub=delivery.target, delivery_id=self.new_id("f"),
                             answers=delivery.id, error=error, sender=delivery.target,
                             target=delivery.sender)

    async def hop(self, delivery: Delivery) -> None:
        leg = f"leg{next(self._legs)}"
        spec = delivery.spec
        emit.leg_started(leg_id=leg, leg_kind="route", delivery_id=delivery.id,
                         sender=delivery.sender, target=delivery.target,
                         message_type=spec.type_name, message_class=spec.message_class,
                         packaged=True)
        await asyncio.sleep(HOP_S)
        found = delivery.target in self.hubs and not removed(delivery.target)
        emit.leg_ended(leg_id=leg, leg_kind="route", delivery_id=delivery.id,
                       reason="completed" if found else "failed")
        if found:
            self.offer(replace(delivery, packaged=True))
        else:
            self.answer(delivery, "NotFound")

    async def grain_call(self, delivery: Delivery, attempts: int = 3) -> None:
        loop = asyncio.get_running_loop()
        for attempt in range(attempts):
            emit.attempt(hub="grain", delivery_id=delivery.id, target=delivery.target,
                         attempt=attempt, sender=delivery.sender,
                         message_type=delivery.spec.type_name,
                         message_class=delivery.spec.message_class)
            fault = await point(delivery.target)
            if fault is not None and fault.kind is FaultKind.REJECT_NEXT:
                emit.attempt_failed(delivery_id=delivery.id, attempt=attempt,
                                    error="rejected", timed_out=False)
                await asyncio.sleep(0.25 * 2**attempt)
                continue
            if fault is not None and fault.kind is FaultKind.REMOVE_TARGET:
                self.answer(delivery, "NotFound")
                return
            emit.call_received(hub=delivery.target, delivery_id=delivery.id, attempt=attempt)
            reply: asyncio.Future[None] = loop.create_future()
            late = fault is not None and fault.kind is FaultKind.TIMEOUT_NEXT
            if not late:  # (an aggregate, which the mesh does not model, is ignored)
                self.offer(replace(delivery, packaged=True))
                reply.set_result(None)
            try:
                async with asyncio.timeout(REPLY_TIMEOUT_S):
                    await reply
            except TimeoutError:
                emit.attempt_failed(delivery_id=delivery.id, attempt=attempt,
                                    error="ResponseTimeout", timed_out=True)
                self.offer(replace(delivery, packaged=True))  # the callee runs it late
            return
        self.answer(delivery, "Rejected")  # refused on every call: the sender is told


class MiniAdapter(AsyncMeshAdapter):
    capabilities = frozenset({Capability.GRAIN_ROUTER})

    def __init__(self, chooser: Chooser) -> None:
        super().__init__(chooser)
        self.mesh = MiniMesh()

    def create_hub(self, address: str, *, watermark: int | None = None) -> None:
        with self.active():
            hub = self.mesh.add_hub(address, 100 if watermark is None else watermark)
        self.spawn(hub.pump(), name=f"pump {address}")

    def post(self, sender: str, target: str, message: MessageSpec, *,
             identity: str | None = "user", route: Route = Route.MONOLITH) -> str:
        delivery = Delivery(self.mesh.new_id(), sender, target, message, identity)
        self.spawn(self.mesh.deliver(delivery, route), name=f"post {delivery.id}")
        return delivery.id

    def has_hub(self, address: str) -> bool:
        return address in self.mesh.hubs


def make(chooser: Chooser) -> MiniAdapter:
    return MiniAdapter(chooser)
