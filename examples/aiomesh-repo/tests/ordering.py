"""A virtual-time event loop for aiomesh's tests, with a say in what runs first.

Time moves only when nothing is ready, straight to the earliest timer (deadlines are kept
to whole microseconds, so two timers set for the same instant by different sums tie
exactly). What is ready at once runs in FIFO order unless a `pick` function chooses:
given the ready handles, it returns the index of the one to run next. `prefer(...)`
builds one from handle descriptions (`describe`): a timer's sleep names the task it
wakes (`sleep:leg1`), a timeout its task (`timeout:s1`), a task step its task
(`step:stop`). The tests use it to run two things due at the same instant in the order
FIFO never picks, and so show a race window that exists by construction.
"""

from __future__ import annotations

import asyncio
import collections
import selectors
from asyncio import futures
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
Pick = Callable[[Sequence[asyncio.Handle]], int]


def describe(handle: asyncio.Handle) -> str:
    callback = handle._callback  # type: ignore[attr-defined]
    owner = getattr(callback, "__self__", None)
    if isinstance(owner, asyncio.Task):
        return f"step:{owner.get_name()}"
    if isinstance(owner, asyncio.Timeout):
        task = owner._task  # type: ignore[attr-defined]
        return f"timeout:{task.get_name() if task is not None else '?'}"
    if callback is futures._set_result_unless_cancelled:  # type: ignore[attr-defined]
        waiter = handle._args[0]  # type: ignore[attr-defined]
        for done, _ in getattr(waiter, "_callbacks", None) or ():
            if isinstance(task := getattr(done, "__self__", None), asyncio.Task):
                return f"sleep:{task.get_name()}"
        return "sleep:?"
    return f"call:{getattr(callback, '__qualname__', repr(callback))}"


def prefer(*prefixes: str) -> Pick:
    """Run first a ready handle whose description starts with the first prefix that any
    does, else FIFO."""
    def pick(ready: Sequence[asyncio.Handle]) -> int:
        names = [describe(h) for h in ready]
        for prefix in prefixes:
            for i, name in enumerate(names):
                if name.startswith(prefix):
                    return i
        return 0
    return pick


class _Ready(collections.deque):  # type: ignore[type-arg]
    def __init__(self, pick: Pick | None) -> None:
        super().__init__()
        self.pick = pick

    def popleft(self) -> Any:
        if self.pick is None or len(self) < 2:
            return super().popleft()
        index = self.pick(list(self))
        item = self[index]
        del self[index]
        return item


class _NoWait:
    """The loop's selector, except that waiting for `timeout` moves the clock instead."""

    def __init__(self, real: selectors.BaseSelector, loop: OrderingLoop) -> None:
        self._real = real
        self._loop = loop

    def select(self, timeout: float | None = None) -> list[Any]:
        events = self._real.select(0)
        if not events and timeout is None:
            raise RuntimeError("nothing is scheduled: the run would wait for ever")
        if not events and timeout:
            self._loop.now = self._loop.next_deadline()
        return events

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


class OrderingLoop(asyncio.SelectorEventLoop):
    def __init__(self, pick: Pick | None = None) -> None:
        super().__init__()
        self.now = 0.0
        self._ready = _Ready(pick)  # type: ignore[assignment]
        self._selector = _NoWait(self._selector, self)  # type: ignore[assignment]

    def time(self) -> float:
        return self.now

    def call_at(self, when: float, callback: Callable[..., Any], *args: Any,
                context: Any = None) -> asyncio.TimerHandle:
        return super().call_at(round(when, 6), callback, *args, context=context)

    def next_deadline(self) -> float:
        live = [h.when() for h in self._scheduled if not h.cancelled()]  # type: ignore[attr-defined]
        return max(self.now, min(live)) if live else self.now


def run(main: Coroutine[Any, Any, T], pick: Pick | None = None) -> T:
    """Run `main` to completion on a fresh ordering loop."""
    loop = OrderingLoop(pick)
    try:
        return loop.run_until_complete(main)
    finally:
        loop.close()
