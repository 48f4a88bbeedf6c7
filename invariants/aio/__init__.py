"""Real asyncio code under the harness: a virtual-time event loop and an adapter kit.

The loop (`VirtualLoop`, `run`) runs one ready callback per step in virtual time and asks
the harness's `Chooser` for the ready order, among legal schedules only by default
(docs/asyncio.md). Its errors name what happened: `FencedCall`, `Stuck`, `Runaway`,
`ScheduleDivergence`. Every decision is recorded in a `Schedule`; `render_schedule` reads
it as "FIFO except: at t=…, ran X before Y", and a recording replays checked.
"""

from invariants.aio.errors import (
    FencedCall,
    Runaway,
    ScheduleDivergence,
    Stuck,
    VirtualLoopError,
)
from invariants.aio.labels import describe
from invariants.aio.loop import DEFAULT_STEP_BUDGET, VirtualLoop
from invariants.aio.run import RunResult, run
from invariants.aio.schedule import Decision, Legality, Schedule, format_time, render_schedule

__all__ = [
    "DEFAULT_STEP_BUDGET",
    "Decision",
    "FencedCall",
    "Legality",
    "RunResult",
    "Runaway",
    "Schedule",
    "ScheduleDivergence",
    "Stuck",
    "VirtualLoop",
    "VirtualLoopError",
    "describe",
    "format_time",
    "render_schedule",
    "run",
]
