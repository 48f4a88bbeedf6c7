"""A hub: an intake (gate, identity guard, breaker, watermark) and one turn at a time."""

from __future__ import annotations

import asyncio
from collections import deque
from typing import TYPE_CHECKING

from invariants.aio import emit
from invariants.aio.points import turn
from invariants.trace import MessageClass

from lantern.breaker import DROP, TRIP, Breaker
from lantern.messages import FAILURE, IGNORABLE, LIFECYCLE, SYSTEM, USER, Envelope

if TYPE_CHECKING:
    from lantern.node import Node

APPLICATION = (USER, IGNORABLE)  # what a closed teardown gate refuses
COUNTED = (USER, SYSTEM)  # what the breaker counts; never heartbeats, lifecycle or failures


def now_us() -> int:
    return round(asyncio.get_running_loop().time() * 1_000_000)


class Hub:
    def __init__(self, node: Node, name: str, watermark: int, threshold: int) -> None:
        fig = node.cluster.figures
        self.node = node
        self.name = name
        self.watermark = watermark
        self.bug = node.cluster.bug
        breaker = Breaker(threshold, fig.breaker_window_ms, fig.breaker_cooldown_ms,
                          fig.breaker_max_keys, timed_windows=self.bug("l06"))
        if self.bug("l04"):  # kept by the cluster, so a storm cannot reset it by a restart
            breaker = node.cluster.kept_breakers.setdefault(name, breaker)
        self.breaker = breaker
        self.queue: deque[Envelope] = deque()
        self.gate_closed = False
        self.handled = 0
        self._ready = asyncio.Event()
        self.pump_task: asyncio.Task[None] | None = None
        emit.hub_created(hub=name, watermark=watermark)

    def offer(self, env: Envelope) -> bool:
        """One verdict per offer; True when it joined the queue."""
        cls = env["cls"]
        emit.posted(hub=self.name, delivery_id=env["id"], sender=env["snd"], target=env["tgt"],
                    message_type=env["type"], message_class=MessageClass(cls),
                    diagnostic_key=env["key"], packaged=env["pkg"], subscription_id=env["sub"])
        if self.gate_closed and cls in APPLICATION:
            emit.gated(hub=self.name, delivery_id=env["id"])
            return False
        if env["ident"] is None and cls != SYSTEM:
            emit.rejected(hub=self.name, delivery_id=env["id"], error="Anonymous")
            return False
        if cls in COUNTED:
            key = (env["tgt"], env["type"], env["key"]) if self.bug("l11") else \
                (env["snd"], env["tgt"], env["type"], env["key"])
            verdict = self.breaker.admit(key, now_us())
            if verdict == TRIP:
                emit.breaker_tripped(hub=self.name, delivery_id=env["id"], sender=env["snd"],
                                     target=env["tgt"], message_type=env["type"],
                                     diagnostic_key=env["key"])
            if verdict in (TRIP, DROP):
                emit.dropped(hub=self.name, delivery_id=env["id"], depth=len(self.queue),
                             error="Ignored")
                return False
        full = len(self.queue) > self.watermark if self.bug("l09") else len(self.queue) >= self.watermark
        if cls == IGNORABLE and full:
            emit.shed(hub=self.name, delivery_id=env["id"], depth=len(self.queue),
                      watermark=self.watermark, error="Ignored")
            return False
        self.queue.append(env)
        emit.enqueued(hub=self.name, delivery_id=env["id"], depth=len(self.queue))
        self._ready.set()
        return True

    async def pump(self) -> None:
        while True:
            while not self.queue:
                self._ready.clear()
                await self._ready.wait()
            await turn(self.name)
            if not self.queue:
                continue
            env = self.queue.popleft()
            emit.handled(hub=self.name, delivery_id=env["id"], message_type=env["type"])
            self.handled += 1
            self.node.on_handled(self, env)

    def close(self) -> None:
        self.queue.clear()
        if self.pump_task is not None:
            self.pump_task.cancel()


__all__ = ["APPLICATION", "COUNTED", "FAILURE", "LIFECYCLE", "Hub"]
