"""The virtual clock and its event queue: the only source of time in the reference mesh.

Events due at the same virtual millisecond are "ready" together; which of them runs next
is asked of the injected `Chooser`, so Hypothesis can drive and shrink interleavings.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any

from invariants.adapter import Chooser, FirstChooser


class Timer:
    """A scheduled callback; `cancel()` makes it a no-op (lazy removal from the queue)."""

    __slots__ = ("args", "callback", "cancelled", "due_ms")

    def __init__(self, due_ms: int, callback: Callable[..., None], args: tuple[Any, ...]) -> None:
        self.due_ms = due_ms
        self.callback = callback
        self.args = args
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class Scheduler:
    """Discrete-event loop over integer virtual milliseconds."""

    def __init__(self, chooser: Chooser | None = None) -> None:
        self.chooser: Chooser = chooser if chooser is not None else FirstChooser()
        # FirstChooser always picks the oldest: skip asking it (the benchmark's hot path).
        self._fifo = type(self.chooser) is FirstChooser
        self.now = 0
        self._heap: list[tuple[int, int, Timer]] = []
        self._ready: list[Timer] = []  # due now, in scheduling order
        self._ready_head = 0  # FIFO read position in _ready
        self._seq = 0
        self.events_run = 0

    def at(self, due_ms: int, callback: Callable[..., None], *args: Any) -> Timer:
        if due_ms < self.now:
            raise ValueError(f"cannot schedule in the past: {due_ms} < {self.now}")
        timer = Timer(due_ms, callback, args)
        if due_ms == self.now:
            # The queue only ever holds later events, so this joins the batch due now.
            self._ready.append(timer)
        else:
            self._seq += 1
            heapq.heappush(self._heap, (due_ms, self._seq, timer))
        return timer

    def rearm(self, timer: Timer, due_ms: int) -> None:
        """Schedule `timer` again (it must not be pending): a hub's pump reuses one timer
        for every turn instead of allocating one per message."""
        if due_ms < self.now:
            raise ValueError(f"cannot schedule in the past: {due_ms} < {self.now}")
        timer.due_ms = due_ms
        timer.cancelled = False
        if due_ms == self.now:
            self._ready.append(timer)
        else:
            self._seq += 1
            heapq.heappush(self._heap, (due_ms, self._seq, timer))

    def after(self, delay_ms: int, callback: Callable[..., None], *args: Any) -> Timer:
        return self.at(self.now + delay_ms, callback, *args)

    def _fill_ready(self) -> None:
        """Move every event of the earliest due time into the ready batch (the heap's head
        is live: `run` drops cancelled ones first)."""
        heap = self._heap
        due = heap[0][0]
        ready: list[Timer] = []
        while heap and heap[0][0] == due:
            timer = heapq.heappop(heap)[2]
            if not timer.cancelled:
                ready.append(timer)
        self.now = due
        self._ready = ready
        self._ready_head = 0

    def _choose(self, count: int) -> int:
        pick = self.chooser.choose(count, "next-event")
        if not 0 <= pick < count:
            raise ValueError(f"chooser picked {pick} of {count} ready events (0..{count - 1})")
        return pick

    def run(self, limit_ms: int) -> bool:
        """Run every event due at or before `limit_ms`; True when nothing is left scheduled.
        The clock stops at the last event run."""
        heap = self._heap
        while True:
            ready, head = self._ready, self._ready_head
            count = len(ready) - head
            if count <= 0:
                while heap and heap[0][2].cancelled:
                    heapq.heappop(heap)
                if not heap:
                    return True
                if heap[0][0] > limit_ms:
                    return False
                self._fill_ready()
                continue
            pick = 0 if self._fifo or count == 1 else self._choose(count)
            if pick:
                timer = ready.pop(head + pick)  # the others keep their relative order
            else:
                timer = ready[head]
                self._ready_head = head + 1
            if not timer.cancelled:
                self.events_run += 1  # read by benchmarks/sim_throughput.py only
                timer.callback(*timer.args)

    def run_until(self, limit_ms: int) -> None:
        """Run every event due at or before `limit_ms`, then set the clock to `limit_ms`."""
        self.run(limit_ms)
        self.now = max(self.now, limit_ms)
