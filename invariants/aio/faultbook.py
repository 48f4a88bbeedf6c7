"""The faults a kit adapter armed, spent in the order docs/adapter.md defines.

Call faults are counted per target and spent by calls in call order: a `REJECT_NEXT` by
the next call to its target (which then never reaches the callee); an `AGGREGATE_NEXT`,
else a `TIMEOUT_NEXT`, by the next call that reaches the callee. `SLOW_DESTINATION` makes
every later call to its target take `duration_ms`; `BLOCK_HUB` holds a hub's turn for
`duration_ms` (overlapping blocks last until the latest ends); `REMOVE_TARGET` marks the
target gone.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Any

from invariants.adapter import Fault, FaultKind

_CALL_FAULTS = (FaultKind.REJECT_NEXT, FaultKind.TIMEOUT_NEXT, FaultKind.AGGREGATE_NEXT)


def _nothing(hub: str) -> None:
    return None


class FaultBook:
    """Armed faults against one loop's clock. `on_block(hub)` and `on_release(hub)` are
    called when a hub's turn is first held and when the hold ends."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        *,
        on_block: Callable[[str], None] = _nothing,
        on_release: Callable[[str], None] = _nothing,
    ) -> None:
        self._loop = loop
        self._on_block = on_block
        self._on_release = on_release
        self._armed: dict[tuple[FaultKind, str], deque[Fault]] = {}
        self._slow_ms: dict[str, int] = {}
        self._blocked_until: dict[str, float] = {}
        self._waiting: dict[str, list[asyncio.Future[None]]] = {}
        self.removed: set[str] = set()

    def arm(self, fault: Fault) -> None:
        if fault.count < 0 or fault.duration_ms < 0:
            raise ValueError(f"fault {fault.kind.value}: count and duration_ms must be >= 0")
        kind, target = fault.kind, fault.target
        if kind in _CALL_FAULTS:
            self._armed.setdefault((kind, target), deque()).extend([fault] * fault.count)
        elif kind is FaultKind.SLOW_DESTINATION:
            self._slow_ms[target] = fault.duration_ms
        elif kind is FaultKind.BLOCK_HUB:
            self.block(target, fault.duration_ms)
        elif kind is FaultKind.REMOVE_TARGET:
            self.removed.add(target)

    def take(self, kind: FaultKind, target: str) -> Fault | None:
        """Spend one armed `kind` fault of `target`, if any."""
        armed = self._armed.get((kind, target))
        return armed.popleft() if armed else None

    def armed(self, kind: FaultKind, target: str) -> int:
        """How many `kind` faults of `target` are left."""
        return len(self._armed.get((kind, target), ()))

    def slow_ms(self, target: str) -> int:
        return self._slow_ms.get(target, 0)

    # Blocked turns.

    def block(self, hub: str, duration_ms: int) -> None:
        loop = self._loop
        until = loop.time() + duration_ms / 1000
        current = self._blocked_until.get(hub)
        if current is not None and until <= current:
            return
        if current is None:
            self._on_block(hub)
        self._blocked_until[hub] = until
        loop.call_later(duration_ms / 1000, self._release_if_due, hub, until)

    def blocked(self, hub: str) -> bool:
        return hub in self._blocked_until

    def _release_if_due(self, hub: str, until: float) -> None:
        if self._blocked_until.get(hub) != until:
            return  # a later block extended the hold
        del self._blocked_until[hub]
        self._on_release(hub)
        for waiter in self._waiting.pop(hub, ()):
            if not waiter.done():
                waiter.set_result(None)

    def released(self, hub: str) -> asyncio.Future[Any]:
        """A future of its own for one waiter, resolved when `hub`'s hold ends (already
        resolved when the hub is not held)."""
        waiter: asyncio.Future[None] = self._loop.create_future()
        if hub in self._blocked_until:
            self._waiting.setdefault(hub, []).append(waiter)
        else:
            waiter.set_result(None)
        return waiter
