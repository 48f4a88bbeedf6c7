"""What a kit adapter attaches to its loop, and how mesh code finds it (or finds nothing).

Mesh code calls the trace shim (`invariants.aio.emit`) and the fault points
(`invariants.aio.points`) unconditionally; they look the rig up here: the running virtual
loop's, else the one an adapter made active for a synchronous call into the mesh. On a
stock loop, or outside any loop, there is none and every call is a no-op.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from invariants.aio.faultbook import FaultBook
from invariants.aio.tracelog import TraceLog


@dataclass(frozen=True, slots=True)
class Rig:
    trace: TraceLog
    faults: FaultBook


_ACTIVE: ContextVar[Rig | None] = ContextVar("invariants_aio_rig", default=None)


def current_rig() -> Rig | None:
    """The harness's rig for the code running now, or None (production)."""
    loop = asyncio._get_running_loop()
    if loop is not None:
        rig = getattr(loop, "rig", None)
        if isinstance(rig, Rig):
            return rig
    return _ACTIVE.get()


@contextmanager
def active(rig: Rig) -> Iterator[Rig]:
    """Make `rig` current for synchronous mesh code called outside the loop."""
    token = _ACTIVE.set(rig)
    try:
        yield rig
    finally:
        _ACTIVE.reset(token)
