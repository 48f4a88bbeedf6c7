"""Real asyncio code under the harness: a virtual-time event loop and an adapter kit.

This package's names are what a team's adapter and tests use; the machinery behind them
(the trace log, the fault book, the rig, the lanes) lives in its modules.

The loop (`VirtualLoop`, `run`) runs one ready callback per step in virtual time and asks
the harness's `Chooser` for the ready order, among legal schedules only by default
(docs/asyncio.md). Its errors name what happened: `FencedCall`, `Stuck`, `Runaway`,
`ScheduleDivergence`. Every decision is recorded in a `Schedule`; `render_schedule` reads
it as "FIFO except: at t=…, ran X before Y", and a recording replays checked.

The kit: `AsyncMeshAdapter`, the adapter protocol over the loop; `emit`, the trace shim
(one call per event kind, a no-op outside the harness); the fault points `point` (or its
halves `sending` and `receiving`, for calls that travel), `turn`, `slowdown` and
`removed`, which follow the armed faults in call order.
"""

from invariants.aio import emit
from invariants.aio.errors import (
    FencedCall,
    Runaway,
    ScheduleDivergence,
    Stuck,
    VirtualLoopError,
)
from invariants.aio.kit import AsyncMeshAdapter
from invariants.aio.loop import VirtualLoop
from invariants.aio.points import point, receiving, removed, sending, slowdown, turn
from invariants.aio.run import RunResult, run
from invariants.aio.schedule import Legality, Schedule, render_schedule

__all__ = [
    "AsyncMeshAdapter",
    "FencedCall",
    "Legality",
    "RunResult",
    "Runaway",
    "Schedule",
    "ScheduleDivergence",
    "Stuck",
    "VirtualLoop",
    "VirtualLoopError",
    "emit",
    "point",
    "receiving",
    "removed",
    "render_schedule",
    "run",
    "sending",
    "slowdown",
    "turn",
]
