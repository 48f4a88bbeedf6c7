"""The loop's tasks: named by its own counter, and closed unstarted once it is gone."""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Coroutine, Generator
from typing import Any

TaskCoroutine = Coroutine[Any, Any, Any] | Generator[Any, None, Any]


class TaskBook:
    """Names the tasks of `loop` in creation order (`Task-1`, `Task-2`, …), per loop and
    not asyncio's process-wide count, so two runs name their tasks alike."""

    def __init__(self, loop: object) -> None:
        self._count = 0
        # The tasks' coroutines that may not have started, for closing those that never did
        # once the loop is gone: a mesh dropped before its tasks ran (an adapter asked only
        # for its capabilities) then warns of none "never awaited". The finalizer holds
        # this list, so a started coroutine (whose frame holds the mesh, and so the loop)
        # must leave it, or the loop and all it ran outlive every run: `forget_started`.
        self._coroutines: list[TaskCoroutine] = []
        weakref.finalize(loop, _close_all, self._coroutines)

    def add(self, coro: TaskCoroutine, name: str | None) -> str:
        """The name of the task about to run `coro` (`name` if given)."""
        self._count += 1
        self._coroutines.append(coro)
        return f"Task-{self._count}" if name is None else name

    def forget_started(self) -> None:
        """Keep only the coroutines that have not started (the loop calls this as each
        drive ends)."""
        self._coroutines[:] = [c for c in self._coroutines if _unstarted(c)]


def _unstarted(coroutine: TaskCoroutine) -> bool:
    if isinstance(coroutine, Coroutine):
        return inspect.getcoroutinestate(coroutine) == inspect.CORO_CREATED
    return inspect.getgeneratorstate(coroutine) == inspect.GEN_CREATED


def _close_all(coroutines: list[TaskCoroutine]) -> None:
    """Close the coroutines that never started (closing one runs none of its code); one
    suspended mid-way is left to the garbage collector, as on a stock loop."""
    for coroutine in coroutines:
        if _unstarted(coroutine):
            coroutine.close()
