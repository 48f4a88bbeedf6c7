"""A hub: an intake (teardown gate, identity guard, storm breaker, watermark) and a pump that
takes one letter at a time."""

from __future__ import annotations

import asyncio
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass

from invariants.aio import emit, slowdown, turn
from invariants.trace import MessageClass
from pigeon.letters import IGNORABLE, SYSTEM, USER, Letter
from pigeon.settings import Settings

ENQUEUED, REJECTED, GATED, DROPPED, SHED = "enqueued", "rejected", "gated", "dropped", "shed"


@dataclass
class KeyState:
    opened_ms: int
    count: int = 0
    shut_until_ms: int | None = None


class StormBreaker:
    """Per key (sender, target, body, topic): `threshold` posts per window, the window opened
    by the key's first post; the next post trips the key for `cooldown_ms`."""

    def __init__(self, threshold: int, settings: Settings) -> None:
        self.threshold = threshold
        self.window_ms = settings.breaker_window_ms
        self.cooldown_ms = settings.breaker_cooldown_ms
        self.max_keys = settings.breaker_max_keys
        self.keys: OrderedDict[tuple[str, str, str, str | None], KeyState] = OrderedDict()

    def admit(self, key: tuple[str, str, str, str | None], now_ms: int) -> str:
        """"ok", "trip" (this post trips the key) or "shut" (the key is cooling down)."""
        state = self.keys.get(key)
        if state is not None and state.shut_until_ms is not None:
            if now_ms < state.shut_until_ms:
                self.keys.move_to_end(key)
                return "shut"
            state = None
        if state is None or now_ms - state.opened_ms >= self.window_ms:
            state = KeyState(opened_ms=now_ms)
        self.keys[key] = state
        self.keys.move_to_end(key)
        while len(self.keys) > self.max_keys:
            self.keys.popitem(last=False)
        state.count += 1
        if state.count > self.threshold:
            state.shut_until_ms = now_ms + self.cooldown_ms
            return "trip"
        return "ok"


def _cls(letter: Letter) -> MessageClass:
    return MessageClass(letter.kind)


class Hub:
    def __init__(self, name: str, node: str, settings: Settings, *, watermark: int | None,
                 breaker_threshold: int | None, now_ms: Callable[[], int],
                 on_turn: Callable[[Hub, Letter], None]) -> None:
        self.name = name
        self.node = node
        self.settings = settings
        self.watermark = watermark if watermark is not None else settings.watermark
        self.breaker = StormBreaker(breaker_threshold if breaker_threshold is not None
                                    else settings.breaker_threshold, settings)
        self.now_ms = now_ms
        self.on_turn = on_turn
        self.queue: deque[Letter] = deque()
        self.arrivals: deque[Letter] = deque()
        self.gate_closed = False
        self.wake = asyncio.Event()
        self.arrived = asyncio.Event()
        self.tasks: list[asyncio.Task[None]] = []

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        emit.hub_created(hub=self.name, watermark=self.watermark)
        self.tasks.append(loop.create_task(self._pump(), name=f"pump {self.name}"))
        self.tasks.append(loop.create_task(self._door(), name=f"door {self.name}"))

    def close(self) -> None:
        for task in self.tasks:
            task.cancel()

    # The front door: letters handed straight to this hub, taken up in the order they came.

    def hand_in(self, letter: Letter) -> None:
        self.arrivals.append(letter)
        self.arrived.set()

    async def _door(self) -> None:
        while True:
            await self.arrived.wait()
            self.arrived.clear()
            while self.arrivals:
                letter = self.arrivals.popleft()
                await slowdown(self.name)
                self.offer(letter)

    # The intake.

    def offer(self, letter: Letter) -> str:
        now = self.now_ms()
        emit.posted(hub=self.name, delivery_id=letter.id, sender=letter.sender,
                    target=letter.target, message_type=letter.body,
                    message_class=_cls(letter), diagnostic_key=letter.topic,
                    packaged=letter.packaged, subscription_id=letter.sub_id)
        if self.gate_closed and letter.kind in (USER, IGNORABLE):
            emit.gated(hub=self.name, delivery_id=letter.id)
            return GATED
        if letter.identity is None and letter.kind != SYSTEM:
            emit.rejected(hub=self.name, delivery_id=letter.id, error="NoIdentity")
            return REJECTED
        if letter.kind == USER:
            verdict = self.breaker.admit((letter.sender, letter.target, letter.body,
                                          letter.topic), now)
            if verdict != "ok":
                if verdict == "trip":
                    emit.breaker_tripped(hub=self.name, delivery_id=letter.id,
                                         sender=letter.sender, target=letter.target,
                                         message_type=letter.body,
                                         diagnostic_key=letter.topic)
                emit.dropped(hub=self.name, delivery_id=letter.id, depth=len(self.queue),
                             error="Ignored")
                return DROPPED
        if letter.kind == IGNORABLE and len(self.queue) >= self.watermark:
            emit.shed(hub=self.name, delivery_id=letter.id, depth=len(self.queue),
                      watermark=self.watermark, error="Ignored")
            return SHED
        self.queue.append(letter)
        emit.enqueued(hub=self.name, delivery_id=letter.id, depth=len(self.queue))
        self.wake.set()
        return ENQUEUED

    # The pump: one letter at a time.

    async def _pump(self) -> None:
        while True:
            await self.wake.wait()
            await turn(self.name)
            if not self.queue:
                self.wake.clear()
                continue
            letter = self.queue.popleft()
            emit.handled(hub=self.name, delivery_id=letter.id, message_type=letter.body)
            self.on_turn(self, letter)
            await asyncio.sleep(0)
