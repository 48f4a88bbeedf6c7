"""Names for ready callbacks, deterministic across processes (no ids, no addresses).

A task's step or wake-up is the task's name (the loop names tasks by its own counter); any
other callback is its qualified name, with the task it wakes when one can be seen (the
future in its first argument, or a `_task` attribute of its owner, as `asyncio.timeout`
has); a timer's name starts `timer:`.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any


def _qualname(callback: object) -> str:
    while isinstance(callback, functools.partial):
        callback = callback.func
    name = getattr(callback, "__qualname__", None)
    if isinstance(name, str):
        return name
    return type(callback).__qualname__


def _task_waiting_on(future: asyncio.Future[Any]) -> asyncio.Task[Any] | None:
    for callback, _context in getattr(future, "_callbacks", None) or ():
        owner = getattr(callback, "__self__", None)
        if isinstance(owner, asyncio.Task):
            return owner
    return None


def _task_of(callback: object, args: tuple[Any, ...]) -> asyncio.Task[Any] | None:
    while isinstance(callback, functools.partial):
        args = tuple(callback.args) + args
        callback = callback.func
    owner = getattr(callback, "__self__", None)
    if isinstance(owner, asyncio.Task):
        return owner
    task = getattr(owner, "_task", None)
    if isinstance(task, asyncio.Task):
        return task
    if args and isinstance(args[0], asyncio.Future):
        return _task_waiting_on(args[0])
    return None


def describe(handle: asyncio.Handle) -> str:
    """What running `handle` does, in a few deterministic words."""
    callback: object = handle._callback  # type: ignore[attr-defined]
    args: tuple[Any, ...] = tuple(handle._args or ())
    owner = getattr(callback, "__self__", None)
    if isinstance(owner, asyncio.Task):
        text = owner.get_name()
    else:
        text = _qualname(callback)
        task = _task_of(callback, args)
        if task is not None:
            text = f"{text}({task.get_name()})"
    if isinstance(handle, asyncio.TimerHandle):
        return f"timer:{text}"
    return text
