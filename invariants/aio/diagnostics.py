"""Why a run cannot go on: a runaway instant (the step budget) and a stuck run."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

from invariants.aio import waits
from invariants.aio.errors import Runaway
from invariants.aio.replay import NEVER
from invariants.aio.schedule import format_time

# Steps one virtual instant may take before the loop calls it a runaway.
DEFAULT_STEP_BUDGET = 200_000
# Virtual seconds `run_until_complete` (and so `run`) may take: an hour, far past any
# timeout or backoff of a mesh under test, and reached in a blink of real time.
DEFAULT_TIME_LIMIT = 3600.0


class StepBudget:
    """`steps` steps per virtual instant (None: no bound), and `alarm_step`, the first step
    the loop must look at before running: the first over the budget, or the replay's next
    recorded choice, whichever comes sooner. One comparison per step then covers both."""

    def __init__(self, steps: int | None) -> None:
        self.steps = steps
        self._runaway_at = NEVER
        self.alarm_step = NEVER

    def restart(self, step: int, replay_at: int) -> None:
        """Time moved after `step`: the budget starts again."""
        budget = self.steps
        self._runaway_at = NEVER if budget is None else step + budget + 1
        self.rearm(replay_at)

    def rearm(self, replay_at: int) -> None:
        self.alarm_step = min(self._runaway_at, replay_at)

    def runaway(self, step: int, now_us: int, ready: str) -> Runaway:
        """The error for `step`, the first over the budget, with `ready` named."""
        return Runaway(
            f"{self.steps} steps without virtual time moving "
            f"(t={format_time(now_us)}, steps {step - (self.steps or 0)}"
            f"–{step - 1}); ready now: {ready}"
        )


def overtime_message(
    now_us: int, steps: int, limit_us: int, awaited: Iterable[asyncio.Future[Any]],
    tasks: Iterable[asyncio.Task[Any]],
) -> str:
    """The awaited work is unfinished after the time limit, while timers keep firing."""
    return (
        f"stuck at t={format_time(now_us)} after {steps} steps: the awaited work "
        f"({_names(awaited)}) is unfinished after the time limit of {format_time(limit_us)} "
        "of virtual time, while timers keep firing (a heartbeat, a poll), so it may never "
        "finish (raise the loop's time_limit if it needs longer).\n"
        + waits.report(tasks)
    )


def _names(awaited: Iterable[asyncio.Future[Any]]) -> str:
    return ", ".join(
        f.get_name() if isinstance(f, asyncio.Task) else repr(f)
        for f in awaited if not f.done()
    )


def stuck_message(
    now_us: int, steps: int, awaited: Iterable[asyncio.Future[Any]],
    tasks: Iterable[asyncio.Task[Any]],
) -> str:
    """Nothing is ready and no timer is armed: what was awaited, and where every pending
    task waits."""
    what = _names(awaited)
    if what:
        head = f"the awaited work ({what}) is unfinished"
    else:
        head = "the loop was asked to run for ever"
    return (
        f"stuck at t={format_time(now_us)} after {steps} steps: nothing is "
        f"ready, no timer is armed, and {head}.\n"
        + waits.report(tasks)
    )
