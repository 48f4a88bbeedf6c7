"""The virtual clock: integer microseconds, and the heap of timers armed on it."""

from __future__ import annotations

import asyncio
import heapq
import math

US = 1_000_000


class Clock:
    """Virtual time, and its timers: a heap of (due microseconds, creation number, handle,
    armed microseconds), the number keeping timers due together in creation order."""

    def __init__(self) -> None:
        self.now_us = 0
        self.timers: list[tuple[int, int, asyncio.TimerHandle, int]] = []
        self._armed = 0
        self._cancelled = 0
        # Whether this instant's choices are timer ties: a timeout fell due, or timers
        # armed at different instants fell due together (two chains of work meeting, as a
        # sleep ends when a leg lands). Timers armed in one instant with one delay (a burst
        # of posts) are one chain: their order is no race worth a tie script's entries.
        self.tie = False
        self._first_armed: int | None = None  # when this instant's first due timer was armed

    def moved(self) -> None:
        """Time moved: a new instant, no tie yet."""
        self.tie = False
        self._first_armed = None

    def after(self, delay: float) -> int | None:
        """When a timer `delay` seconds from now is due (None: never, an infinite delay)."""
        if delay is None:
            raise TypeError("delay must not be None")
        if math.isfinite(delay):
            # A positive delay moves time by a microsecond at least (`VirtualLoop.call_later`).
            return self.now_us + (round(delay * US) or (1 if delay > 0 else 0))
        return None if delay > 0 else self.now_us

    def at(self, when: float) -> int | None:
        """When a timer for loop time `when` (seconds) is due (None: never)."""
        if when is None:
            raise TypeError("when cannot be None")
        if math.isfinite(when):
            when_us = round(when * US)
            # A time after now is later than now, by a microsecond at least (a deadline's
            # float residue past the current instant, as for `after`).
            if when_us <= self.now_us and when > self.now_us / US:
                return self.now_us + 1
            return when_us
        return None if when > 0 else self.now_us

    def arm(self, when_us: int, timer: asyncio.TimerHandle) -> None:
        self._armed += 1
        heapq.heappush(self.timers, (when_us, self._armed, timer, self.now_us))
        timer._scheduled = True  # type: ignore[attr-defined]

    def cancelled(self, handle: asyncio.TimerHandle) -> None:
        """`handle` was cancelled: once most of the heap is dead, rebuild it of the live."""
        if not handle._scheduled:  # type: ignore[attr-defined]
            return
        self._cancelled += 1
        timers = self.timers
        if self._cancelled > 100 and 2 * self._cancelled > len(timers):
            live = []
            for entry in timers:
                if entry[2]._cancelled or entry[2] is handle:
                    entry[2]._scheduled = False  # type: ignore[attr-defined]
                else:
                    live.append(entry)
            heapq.heapify(live)
            self.timers = live
            self._cancelled = 0

    def release_due(self) -> list[tuple[asyncio.TimerHandle, int]]:
        """Take every live timer due by now off the heap, in due order (then the order
        they were armed in), each with the instant it was armed at."""
        timers, now = self.timers, self.now_us
        due: list[tuple[asyncio.TimerHandle, int]] = []
        while timers and timers[0][0] <= now:
            _when, _n, timer, armed = heapq.heappop(timers)
            timer._scheduled = False  # type: ignore[attr-defined]
            if timer._cancelled:
                self._cancelled -= 1
            else:
                due.append((timer, armed))
        return due

    def note_ties(self, due: list[tuple[asyncio.TimerHandle, int]]) -> None:
        """`due` fell due at this instant with a choice to make about them: note whether
        the instant's choices are timer ties. (A timer that falls due alone, nothing else
        waiting, lands with no choice, and nothing arriving later in its instant has one.)"""
        for timer, armed in due:
            if self.tie:
                return
            if self._first_armed is None:
                self._first_armed = armed
            self.tie = armed != self._first_armed or _is_timeout(timer)

    def next_due(self) -> int | None:
        """When the earliest live timer is due (cancelled ones at the head are dropped
        first, so a cancelled timer never moves time); None when no timer is armed."""
        timers = self.timers
        while timers and timers[0][2]._cancelled:
            heapq.heappop(timers)[2]._scheduled = False  # type: ignore[attr-defined]
            self._cancelled -= 1
        return timers[0][0] if timers else None


# The callbacks asyncio's timeouts fire: `asyncio.timeout` (and `wait_for` on 3.12+, built
# on it) and 3.11's own `wait_for`.
_TIMEOUT_CALLBACKS = frozenset(
    f for f in (getattr(asyncio.Timeout, "_on_timeout", None),
                getattr(asyncio.tasks, "_release_waiter", None)) if f is not None
)


def _is_timeout(handle: asyncio.Handle) -> bool:
    callback = getattr(handle._callback, "__func__", handle._callback)  # type: ignore[attr-defined]
    return callback in _TIMEOUT_CALLBACKS
