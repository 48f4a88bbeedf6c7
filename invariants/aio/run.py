"""`run(main())`: asyncio.run on a fresh virtual loop, returning the schedule with the result."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from invariants.adapter import Chooser
from invariants.aio.errors import VirtualLoopError
from invariants.aio.loop import DEFAULT_STEP_BUDGET, DEFAULT_TIME_LIMIT, VirtualLoop
from invariants.aio.schedule import Legality, Schedule

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class RunResult(Generic[_T]):
    """What `main` returned, the decisions that got there, and the clock at the end."""

    result: _T
    schedule: Schedule
    now_us: int
    steps: int


def run(
    main: Coroutine[Any, Any, _T],
    *,
    chooser: Chooser | None = None,
    legality: Legality | str = Legality.PRODUCTION,
    replay: Schedule | None = None,
    step_budget: int | None = DEFAULT_STEP_BUDGET,
    time_limit: float | None = DEFAULT_TIME_LIMIT,
) -> RunResult[_T]:
    """Run `main` to completion on a new `VirtualLoop`, as `asyncio.run` would: raises
    `Stuck` when it can never finish (or is unfinished after `time_limit` seconds of
    virtual time), `Runaway` past the step budget, `FencedCall` for a
    fenced call (even one the program caught), and, replaying, `ScheduleDivergence`. Tasks
    left pending are cancelled and run out FIFO, unrecorded, before the loop closes."""
    try:
        loop = VirtualLoop(chooser, legality=legality, replay=replay, step_budget=step_budget,
                           time_limit=time_limit)
    except (TypeError, ValueError):
        main.close()  # a bad argument: `main` will never run, so no "never awaited" either
        raise
    try:
        result = loop.run_until_complete(main)
        loop.check_replay_finished()
        return RunResult(result, loop.schedule, loop.now_us, loop.steps)
    finally:
        _close(loop)


def _close(loop: VirtualLoop) -> None:
    loop.stop_choosing()
    try:
        pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
    except VirtualLoopError:
        pass  # the run already failed (stuck, say): what cleanup meets again adds nothing
    finally:
        loop.close()
