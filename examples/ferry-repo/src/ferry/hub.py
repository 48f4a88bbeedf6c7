"""A hub: its intake (teardown gate, identity guard, storm breaker, watermark) and its turn."""
from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable
from types import MappingProxyType
from typing import TYPE_CHECKING

from invariants.aio import emit, points
from invariants.trace import MessageClass

from . import config
from .messages import FAILURE, IGNORABLE, LIFECYCLE, SYSTEM, Delivery

if TYPE_CHECKING:
    from .node import Node

CLASSES = MappingProxyType({c.value: c for c in MessageClass})


def fields(d: Delivery) -> dict:
    return {"delivery_id": d.id, "sender": d.sender, "target": d.target, "message_type": d.type,
            "message_class": CLASSES[d.cls], "diagnostic_key": d.key, "packaged": d.packaged,
            "subscription_id": d.subscription}


class Breaker:
    """Per-key storm breaker: (sender, target, type, identity).

    A window opens at a key's first post.
    """

    def __init__(self, threshold: int) -> None:
        self.threshold = threshold
        # key -> [window start, count, tripped until]
        self._keys: OrderedDict[tuple, list[float]] = OrderedDict()

    def admit(self, key: tuple, now: float) -> str:
        """'ok', 'trip' (this post trips the key) or 'drop' (the key is cooling down)."""
        state = self._keys.get(key)
        if state is not None:
            self._keys.move_to_end(key)
            start, _count, until = state
            if until and now < until:
                return "drop"
            if until or now >= start + config.BREAKER_WINDOW_MS:
                state[:] = [now, 0, 0]
        else:
            if len(self._keys) >= config.BREAKER_MAX_KEYS:
                self._keys.popitem(last=False)
            state = self._keys[key] = [now, 0, 0]
        state[1] += 1
        if state[1] > self.threshold:
            state[2] = now + config.BREAKER_COOLDOWN_MS
            return "trip"
        return "ok"


class Hub:
    def __init__(self, node: Node, address: str, watermark: int, threshold: int) -> None:
        self.node = node
        self.address = address
        self.watermark = watermark
        self.breaker = Breaker(threshold)
        self.queue: asyncio.Queue[Delivery] = asyncio.Queue()
        self.gate_open = True
        self.on_failure: Callable[[Delivery], None] = node.failure_handled
        self.pump_task: asyncio.Task | None = None

    def now_ms(self) -> int:
        return round(time.monotonic() * 1000)

    def offer(self, d: Delivery) -> str:
        """Take a delivery through the intake; returns the verdict."""
        hub = self.address
        emit.posted(hub=hub, **fields(d))
        app = d.cls not in (LIFECYCLE, SYSTEM, FAILURE)
        if not self.gate_open and app:
            emit.gated(hub=hub, delivery_id=d.id)
            return "gated"
        if d.identity is None and d.cls != SYSTEM:
            emit.rejected(hub=hub, delivery_id=d.id, error="NoIdentity")
            return "rejected"
        depth = self.queue.qsize()
        if d.cls not in (IGNORABLE, LIFECYCLE, FAILURE):
            verdict = self.breaker.admit((d.sender, d.target, d.type, d.key), self.now_ms())
            if verdict != "ok":
                if verdict == "trip":
                    emit.breaker_tripped(hub=hub, delivery_id=d.id, sender=d.sender,
                                         target=d.target, message_type=d.type,
                                         diagnostic_key=d.key)
                emit.dropped(hub=hub, delivery_id=d.id, depth=depth, error="Ignored")
                return "dropped"
        shed_at = self.watermark + 1 if self.node.settings.bug("f07") else self.watermark
        if d.cls == IGNORABLE and depth >= shed_at:
            emit.shed(hub=hub, delivery_id=d.id, depth=depth, watermark=self.watermark,
                      error="Ignored")
            return "shed"
        self.queue.put_nowait(d)
        emit.enqueued(hub=hub, delivery_id=d.id, depth=self.queue.qsize())
        return "enqueued"

    async def pump(self) -> None:
        while True:
            d = await self.queue.get()
            await points.turn(self.address)
            emit.handled(hub=self.address, delivery_id=d.id, message_type=d.type)
            if d.cls == FAILURE and d.answers is not None:
                self.on_failure(d)
