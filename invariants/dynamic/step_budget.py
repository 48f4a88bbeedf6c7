"""A CPU-time budget for each step the harness asks of a mesh.

A mesh that never returns from a step (events scheduled at one virtual instant without
end, a retry loop that never yields) would hang the run, and a hang is a verdict the
harness can give from what it knows: it asked for one step and the step did not end. The
budget is CPU time (SIGPROF), not wall time, so a loaded machine does not turn a slow
step into a hang; it is far above what any step of a working mesh costs.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from invariants.adapter import MeshHung

# Default CPU seconds one step may take; the reference mesh's slowest (a 10,000-message
# storm) takes about a tenth of a second.
STEP_BUDGET_SECONDS = 5.0
STEP_BUDGET_ENV = "HARNESS_STEP_BUDGET"


class _Expired(BaseException):
    """Raised by the timer inside the mesh: a BaseException, so the mesh's own
    `except Exception` arms cannot swallow it."""


def step_budget_seconds() -> float:
    """The budget: `$HARNESS_STEP_BUDGET` (seconds, 0 for none), else the default."""
    raw = os.environ.get(STEP_BUDGET_ENV, "").strip()
    if not raw:
        return STEP_BUDGET_SECONDS
    try:
        seconds = float(raw)
    except ValueError:
        raise ValueError(f"{STEP_BUDGET_ENV}={raw!r}: not a number of seconds") from None
    if seconds < 0:
        raise ValueError(f"{STEP_BUDGET_ENV}={raw!r}: must be 0 (no budget) or more")
    return seconds


@contextmanager
def within_budget(what: str) -> Iterator[None]:
    """Run the block; past the budget, raise `MeshHung` naming `what`. Main thread only
    (signals); elsewhere, and with a budget of 0, the block runs unbounded."""
    seconds = step_budget_seconds()
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield
        return

    armed = [True]  # off before the timer is: a late signal after the block is ignored

    def expire(_signum: int, _frame: FrameType | None) -> None:
        if armed[0]:
            raise _Expired

    previous = signal.signal(signal.SIGPROF, expire)
    # Again every half second: a mesh whose loop swallows the first signal is still stopped.
    signal.setitimer(signal.ITIMER_PROF, seconds, 0.5)
    try:
        yield
    except _Expired:
        raise MeshHung(f"{what} did not return within {seconds:g} CPU seconds: the mesh "
                       f"hung (set {STEP_BUDGET_ENV} to change the budget)") from None
    finally:
        armed[0] = False
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)
