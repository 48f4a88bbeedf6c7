"""Real asyncio code under the harness: a virtual-time event loop and an adapter kit.

The loop (`VirtualLoop`, `run`) runs one ready callback per step in virtual time and asks
the harness's `Chooser` for the ready order, among legal schedules only by default
(docs/asyncio.md). Its errors name what happened: `FencedCall`, `Stuck`, `Runaway`,
`ScheduleDivergence`. Every decision is recorded in a `Schedule`; `render_schedule` reads
it as "FIFO except: at t=…, ran X before Y", and a recording replays checked.

The kit: `AsyncMeshAdapter`, the adapter protocol over the loop; `emit`, the trace shim
(one call per event kind, a no-op outside the harness); the fault points `point`,
`turn`, `slowdown` and `removed`, which follow the armed faults (`FaultBook`) in call order.
"""

from invariants.aio import emit
from invariants.aio.errors import (
    FencedCall,
    Runaway,
    ScheduleDivergence,
    Stuck,
    VirtualLoopError,
)
from invariants.aio.faultbook import FaultBook
from invariants.aio.kit import AsyncMeshAdapter
from invariants.aio.labels import describe
from invariants.aio.loop import DEFAULT_STEP_BUDGET, VirtualLoop
from invariants.aio.points import point, removed, slowdown, turn
from invariants.aio.rig import Rig, active, current_rig
from invariants.aio.run import RunResult, run
from invariants.aio.schedule import Decision, Legality, Schedule, format_time, render_schedule
from invariants.aio.tracelog import TraceFields, TraceLog

__all__ = [
    "DEFAULT_STEP_BUDGET",
    "AsyncMeshAdapter",
    "Decision",
    "FaultBook",
    "FencedCall",
    "Legality",
    "Rig",
    "RunResult",
    "Runaway",
    "Schedule",
    "ScheduleDivergence",
    "Stuck",
    "TraceFields",
    "TraceLog",
    "VirtualLoop",
    "VirtualLoopError",
    "active",
    "current_rig",
    "describe",
    "emit",
    "format_time",
    "point",
    "removed",
    "render_schedule",
    "run",
    "slowdown",
    "turn",
]
