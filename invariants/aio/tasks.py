"""The loop's tasks: named by its own counter, and closed unstarted once it is gone."""

from __future__ import annotations

import inspect
import types
import weakref
from collections.abc import Awaitable, Coroutine, Generator
from typing import Any

# What a task may run: a coroutine, a generator-based one, or another object asyncio takes
# for a coroutine (an async generator's `__anext__()`, `asend()`, `athrow()`, `aclose()`
# awaitables, a class implementing `collections.abc.Coroutine`).
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
        self._coroutines: list[types.CoroutineType[Any, Any, Any] | types.GeneratorType[
            Any, Any, Any]] = []
        weakref.finalize(loop, _close_all, self._coroutines)

    def add(self, coro: TaskCoroutine | Awaitable[Any], name: str | None) -> str:
        """The name of the task about to run `coro` (`name` if given)."""
        self._count += 1
        # Only a native coroutine (or generator) can warn "never awaited", and only its
        # state can be read: an async generator's awaitables and other Coroutine
        # implementations are left to the task, as on a stock loop.
        if isinstance(coro, (types.CoroutineType, types.GeneratorType)):
            self._coroutines.append(coro)
        return f"Task-{self._count}" if name is None else name

    def forget_started(self) -> None:
        """Keep only the coroutines that have not started (the loop calls this as each
        drive ends)."""
        self._coroutines[:] = [c for c in self._coroutines if _unstarted(c)]

    def tracked(self) -> int:
        """How many coroutines wait to be closed should the loop go before they start."""
        return len(self._coroutines)


def _unstarted(
    coroutine: types.CoroutineType[Any, Any, Any] | types.GeneratorType[Any, Any, Any],
) -> bool:
    if isinstance(coroutine, types.CoroutineType):
        return inspect.getcoroutinestate(coroutine) == inspect.CORO_CREATED
    return inspect.getgeneratorstate(coroutine) == inspect.GEN_CREATED


def _close_all(
    coroutines: list[types.CoroutineType[Any, Any, Any] | types.GeneratorType[Any, Any, Any]],
) -> None:
    """Close the coroutines that never started (closing one runs none of its code); one
    suspended mid-way is left to the garbage collector, as on a stock loop."""
    for coroutine in coroutines:
        if _unstarted(coroutine):
            coroutine.close()
