"""A hub: an intake with its gates, a queue, and one turn at a time."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum

from .envelope import EXEMPT_FROM_IDENTITY, UNANSWERED, Envelope, Traffic
from .hooks import Hooks
from .observer import Observer

Handler = Callable[[Envelope], Awaitable[object]]


class Intake(StrEnum):
    QUEUED = "queued"
    UNVOUCHED = "unvouched"
    GATED = "gated"
    SHED = "shed"


class HandlerRaised(Exception):
    """The hub's handler raised on a call; the caller is told, the hub goes on."""


class HubClosed(Exception):
    """The hub closed with the call still queued."""


async def _ignore(env: Envelope) -> object:
    return None


@dataclass
class _Item:
    env: Envelope
    reply: asyncio.Future[object] | None


class Hub:
    def __init__(self, node: str, address: str, handler: Handler | None, *, watermark: int,
                 capacity: int, observer: Observer, hooks: Hooks,
                 bugs: frozenset[str] = frozenset()) -> None:
        self.node = node
        self.address = address
        self.watermark = watermark
        self.capacity = capacity
        self._handler = handler or _ignore
        self._observer = observer
        self._hooks = hooks
        self._queue: asyncio.Queue[_Item] = asyncio.Queue()
        self._pump: asyncio.Task[None] | None = None
        self._current: _Item | None = None
        self.closed = False
        self._bugs = bugs
        observer.hub_opened(node, address, watermark=watermark, capacity=capacity)

    @property
    def depth(self) -> int:
        return self._queue.qsize()

    @property
    def full(self) -> bool:
        return self.depth >= self.capacity

    def offer(self, env: Envelope, *, packaged: bool,
              reply: asyncio.Future[object] | None = None) -> Intake:
        """Let `env` in, or say why not. `reply`, if given, gets the handler's result."""
        self._observer.offered(self.node, self.address, env, packaged=packaged)
        if self.closed:
            self._observer.gated(self.node, self.address, env)
            return Intake.GATED
        if env.identity is None and env.traffic not in EXEMPT_FROM_IDENTITY:
            self._observer.unvouched(self.node, self.address, env)
            return Intake.UNVOUCHED
        # Shed only what nobody waits for, so a flood of it cannot wedge the turn.
        past = (self.depth > self.watermark if "n04" in self._bugs
                else self.depth >= self.watermark)
        if past and (env.traffic in UNANSWERED and env.traffic is not Traffic.LIFECYCLE):
            self._observer.shed(self.node, self.address, env, depth=self.depth,
                                watermark=self.watermark)
            return Intake.SHED
        self._queue.put_nowait(_Item(env, reply))
        self._observer.queued(self.node, self.address, env, depth=self.depth)
        if self._pump is None:
            self._pump = asyncio.get_running_loop().create_task(
                self._turns(), name=f"hub {self.address}")
        return Intake.QUEUED

    async def _turns(self) -> None:
        while True:
            item = self._current = await self._queue.get()
            await self._hooks.before_turn(self.address)
            self._observer.handled(self.node, self.address, item.env)
            try:
                result = await self._handler(item.env)
            except Exception as exc:  # a handler's fault is its message's, not the hub's
                error = type(exc).__name__
                self._observer.handler_raised(self.node, self.address, item.env, error=error)
                _settle(item, HandlerRaised(error))
            else:
                _settle(item, result)
            self._current = None

    async def close(self) -> None:
        """Close the gate and end the turns; what is still queued is not handled."""
        self.closed = True
        cut = [self._current] if self._current is not None else []
        if self._pump is not None:
            self._pump.cancel()
            await asyncio.gather(self._pump, return_exceptions=True)
        left = self._queue.qsize()
        while not self._queue.empty():
            cut.append(self._queue.get_nowait())
        for item in cut:
            _settle(item, HubClosed(self.address))
        self._observer.hub_closed(self.node, self.address, left=left)


def _settle(item: _Item, outcome: object) -> None:
    """Give a waiting caller the handler's result (or the exception that stands for it)."""
    if item.reply is None or item.reply.done():
        return  # a post, or a caller that gave up
    if isinstance(outcome, Exception):
        item.reply.set_exception(outcome)
    else:
        item.reply.set_result(outcome)
