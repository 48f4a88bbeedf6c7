"""Where a pending task waits: its await chain, outermost coroutine first."""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Iterable
from types import FrameType
from typing import Any


def _frames(awaitable: object) -> list[FrameType]:
    frames: list[FrameType] = []
    seen: set[int] = set()
    current: object | None = awaitable
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        frame = (
            getattr(current, "cr_frame", None)
            or getattr(current, "gi_frame", None)
            or getattr(current, "ag_frame", None)
        )
        if isinstance(frame, FrameType):
            frames.append(frame)
        current = (
            getattr(current, "cr_await", None)
            or getattr(current, "gi_yieldfrom", None)
            or getattr(current, "ag_await", None)
        )
    return frames


def _where(frame: FrameType) -> str:
    code = frame.f_code
    name = getattr(code, "co_qualname", code.co_name)
    return f"{name}() at {os.path.basename(code.co_filename)}:{frame.f_lineno}"


def waits_in(task: asyncio.Task[Any]) -> str:
    """`outer() at a.py:12 → inner() at b.py:30`: the chain of coroutines the task is
    suspended in, innermost last (the frame and line it waits at)."""
    frames = _frames(task.get_coro())
    if not frames:
        return "not started" if not task.done() else "done"
    return " → ".join(_where(frame) for frame in frames)


def _natural(name: str) -> list[Any]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def pending_tasks(tasks: Iterable[asyncio.Task[Any]]) -> list[asyncio.Task[Any]]:
    """The unfinished tasks in a deterministic order (by name, numbers compared as
    numbers: `Task-2` before `Task-10`)."""
    return sorted((t for t in tasks if not t.done()), key=lambda t: _natural(t.get_name()))


def report(tasks: Iterable[asyncio.Task[Any]]) -> str:
    """One line per pending task: its name and where it waits."""
    pending = pending_tasks(tasks)
    if not pending:
        return "no task is pending"
    lines = [f"{len(pending)} pending task(s):"]
    lines += [f"  {task.get_name()}: waits in {waits_in(task)}" for task in pending]
    return "\n".join(lines)
