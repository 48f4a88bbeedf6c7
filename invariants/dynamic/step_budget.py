"""CPU-time budgets: for each step the harness asks of a mesh, and the timer under them.

A mesh that never returns from a step (events scheduled at one virtual instant without
end, a retry loop that never yields) would hang the run, and a hang is a verdict the
harness can give from what it knows: it asked for one step and the step did not end. The
budget is CPU time, not wall time, so a loaded machine does not turn a slow step into a
hang; it is far above what any step of a working mesh costs.
"""

from __future__ import annotations

import gc
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
    """Raised by the step timer inside the mesh: a BaseException, so the mesh's own
    `except Exception` arms cannot swallow it."""


def _in_gc_callback(frame: FrameType | None) -> bool:
    """Whether `frame` runs a garbage-collector callback (Hypothesis has one), where an
    exception is printed as "ignored" and lost."""
    callbacks = {getattr(c, "__code__", None) for c in gc.callbacks}
    while frame is not None:
        if frame.f_code in callbacks:
            return True
        frame = frame.f_back
    return False


@contextmanager
def cpu_alarm(
    seconds: float, timer: int, signum: signal.Signals, raising: type[BaseException]
) -> Iterator[None]:
    """Raise `raising` in the block once it has used `seconds` of CPU time (`timer`:
    ITIMER_PROF or ITIMER_VIRTUAL, signalled by `signum`), and again every half second
    after, so a loop that swallows the first signal (a broad `except`, a gc callback) is
    still stopped. Main thread only (signals); elsewhere, and for 0 seconds, unbounded;
    within another alarm of the same timer, that one bounds the block."""
    if (
        not seconds
        or threading.current_thread() is not threading.main_thread()
        or signal.getitimer(timer)[0] > 0  # inside another budget of this timer: it holds
    ):
        yield
        return
    armed = [True]  # off before the timer is: a late signal after the block is ignored

    def expire(_signum: int, frame: FrameType | None) -> None:
        if armed[0] and not _in_gc_callback(frame):
            raise raising

    previous = signal.signal(signum, expire)
    signal.setitimer(timer, seconds, 0.5)
    try:
        yield
    finally:
        armed[0] = False
        signal.setitimer(timer, 0)
        signal.signal(signum, previous)


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
    """Run the block; past the step budget (CPU, SIGPROF), raise `MeshHung` naming `what`."""
    seconds = step_budget_seconds()
    try:
        with cpu_alarm(seconds, signal.ITIMER_PROF, signal.SIGPROF, _Expired):
            yield
    except _Expired:
        raise MeshHung(f"{what} did not return within {seconds:g} CPU seconds: the mesh "
                       f"hung (set {STEP_BUDGET_ENV} to change the budget)") from None
