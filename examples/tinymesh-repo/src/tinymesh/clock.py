"""Virtual time: one queue of timers, run in due order, ties settled by `pick`."""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field

Pick = Callable[[int], int]  # given n ready timers, the index of the one to run first


@dataclass(order=True)
class Timer:
    due: int
    order: int
    action: Callable[[], None] = field(compare=False)
    cancelled: bool = field(default=False, compare=False)

    def cancel(self) -> None:
        self.cancelled = True


class Clock:
    def __init__(self, pick: Pick) -> None:
        self.now = 0
        self._pick = pick
        self._timers: list[Timer] = []
        self._made = 0

    def after(self, ms: int, action: Callable[[], None]) -> Timer:
        self._made += 1
        timer = Timer(self.now + ms, self._made, action)
        heapq.heappush(self._timers, timer)
        return timer

    def _next_due(self) -> int | None:
        while self._timers and self._timers[0].cancelled:
            heapq.heappop(self._timers)
        return self._timers[0].due if self._timers else None

    def _run_one(self) -> None:
        due = self._timers[0].due
        ready: list[Timer] = []
        while self._timers and self._timers[0].due == due:
            timer = heapq.heappop(self._timers)
            if not timer.cancelled:
                ready.append(timer)
        # Timers due at the same instant may run in any order: the caller decides which.
        chosen = ready.pop(self._pick(len(ready)) if len(ready) > 1 else 0)
        for timer in ready:
            heapq.heappush(self._timers, timer)
        self.now = due
        chosen.action()

    def run_until(self, deadline: int) -> None:
        """Run every timer due up to `deadline`, then stand at `deadline`."""
        while (due := self._next_due()) is not None and due <= deadline:
            self._run_one()
        self.now = max(self.now, deadline)

    def run_idle(self, limit_ms: int) -> bool:
        """Run until no timer is left or `limit_ms` have passed; True when idle."""
        deadline = self.now + limit_ms
        while (due := self._next_due()) is not None:
            if due > deadline:
                self.now = deadline
                return False
            self._run_one()
        return True
