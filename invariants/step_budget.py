"""Budgets for each step the harness asks of a mesh, and the timers under them.

A mesh that never returns from a step would hang the run, and a hang is a verdict the
harness can give from what it knows: it asked for one step and the step did not end. Two
budgets bound each step, either one ends it with `MeshHung` naming the step:

- CPU time (`HARNESS_STEP_BUDGET`, 20 s): a step that computes without end (events
  scheduled at one virtual instant for ever, a retry loop that never yields). CPU time,
  not wall time, so a loaded machine does not turn a slow step into a hang; it is far
  above what any step of a working mesh costs.
- Wall-clock time (`HARNESS_STEP_WALL_BUDGET`, default `WALL_BUDGET_FACTOR` times the CPU
  budget, 120 s): a step that waits without end, using no CPU (blocked in `time.sleep`, on
  a lock, on I/O). A mesh driven on virtual time never waits on the real clock, so a
  working mesh's step is nowhere near it, even on a loaded machine; no decision of a run
  that passes depends on it.

A mutation run judges hundreds of copies of one mesh, and a mutant that loops for ever
would spend the whole default budget in each step it hangs. It measures the unmutated
mesh's slowest step (`steps_seen`) and gives each mutant `MUTANT_STEP_FACTOR` times that
(`derived_budget`, never under `MUTANT_STEP_FLOOR` seconds nor over the default), through
`limited`; `$HARNESS_STEP_BUDGET`, where set, is the budget everywhere.

The budgets are resolved once for a run (`step_budgets`: the variables read and checked,
`limited`'s budget applied) and handed to each of its steps (`within_budget(what,
budgets)`); a step given none resolves them itself.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from types import FrameType

from invariants.adapter_calls import MeshHung
from invariants.interrupts import in_gc_callback
from invariants.user_errors import UserError

# Default CPU seconds one step may take. The reference mesh's slowest (a storm of about
# 4,000 posts) takes about a tenth of a second; the same storm on the asyncio example's real
# code takes up to 5 s, which a budget of 5 s turned into false hangs.
STEP_BUDGET_SECONDS = 20.0
STEP_BUDGET_ENV = "HARNESS_STEP_BUDGET"
# Default wall-clock seconds per CPU second of the step budget.
WALL_BUDGET_FACTOR = 6.0
STEP_WALL_BUDGET_ENV = "HARNESS_STEP_WALL_BUDGET"
# A mutant's step budget: this many times the unmutated mesh's slowest step as the mutation
# run measures it (under coverage when guided, which two or three times a step's CPU: the
# reference's storm takes 0.22 s bare and 0.4-0.7 s measured, so 2-3 s), at least the floor
# (a slowest step measured at a few milliseconds is noise, not a scale).
MUTANT_STEP_FACTOR = 3.0
MUTANT_STEP_FLOOR = 2.0


@dataclass(frozen=True)
class StepsSeen:
    """What the steps of a measured block did."""

    slowest: float = 0.0  # CPU seconds of the slowest step that ended
    hung: bool = False  # a step ran past its budget (`MeshHung`)

    def joined(self, other: StepsSeen) -> StepsSeen:
        return StepsSeen(max(self.slowest, other.slowest), self.hung or other.hung)


@dataclass(frozen=True)
class StepBudgets:
    """A step's two budgets in seconds, 0 for none: CPU time and wall-clock time."""

    cpu: float
    wall: float


class _Steps:
    seen: StepsSeen | None = None  # while measured


_STEPS = _Steps()
# `limited`'s budget, in force for the block it wraps (None: the default).
_LIMIT: ContextVar[float | None] = ContextVar("harness_step_budget_limit", default=None)


class StepBudgetError(UserError, ValueError):
    """A budget variable that is not a number of seconds, named with its value."""


class _Expired(BaseException):
    """Raised by the CPU timer inside the mesh: a BaseException, so the mesh's own
    `except Exception` arms cannot swallow it. `where` names the code it landed in."""

    def __init__(self, where: str = "") -> None:
        super().__init__(where)
        self.where = where


class _WallExpired(_Expired):
    """Raised by the wall-clock timer inside the mesh (a BaseException, as `_Expired`)."""


# Frames of these packages are the machinery a hung step runs in, not where it hung.
_MACHINERY = (
    *(os.path.dirname(module.__file__ or "") + os.sep
      for module in (asyncio, concurrent.futures)),
    os.path.dirname(os.path.abspath(__file__)) + os.sep,
)


def _where(frame: FrameType | None) -> str:
    """The task (on a running event loop) and the innermost frame of the mesh's own code
    that `frame` is in: `in task 'Task-3', at spin (mesh.py:12)`."""
    parts = []
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no running loop: a synchronous mesh
        task = None
    if task is not None:
        parts.append(f"in task {task.get_name()!r}")
    innermost = frame
    while frame is not None:
        if not frame.f_code.co_filename.startswith(_MACHINERY):
            code = frame.f_code
            parts.append(f"at {code.co_name} ({code.co_filename}:{frame.f_lineno})")
            break
        frame = frame.f_back
    else:
        if innermost is not None:
            code = innermost.f_code
            parts.append(f"at {code.co_name} ({code.co_filename}:{innermost.f_lineno})")
    return ", ".join(parts)


def _end_drive(error: BaseException) -> None:
    """Make the running event loop end its drive with `error` after the callback it is
    running: a task keeps an exception raised inside it as its result, and the loop
    would carry on (the virtual loop's `abort_step`; no-op on another loop)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    abort = getattr(loop, "abort_step", None)
    if callable(abort):
        abort(error)


@contextmanager
def cpu_alarm(
    seconds: float, timer: int, signum: signal.Signals, raising: type[BaseException]
) -> Iterator[None]:
    """Raise `raising` in the block once `timer` has counted `seconds` (ITIMER_PROF or
    ITIMER_VIRTUAL: CPU time; ITIMER_REAL: wall-clock time, SIGALRM), and again every
    half second after, so a loop that swallows the first signal (a broad `except`, a gc
    callback) is still stopped (a repeat while one is still propagating is dropped). Main
    thread only (signals); elsewhere, and for 0 seconds, unbounded. Within another alarm
    of the same timer that ends no later, that one bounds the block; a later ITIMER_REAL
    alarm (pytest-timeout's, say) is put back after it, with what was left of it."""
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield
        return
    outer, outer_interval = signal.getitimer(timer)
    if outer > 0 and (timer != signal.ITIMER_REAL or outer <= seconds):
        yield  # inside another alarm of this timer: it holds
        return
    armed = [True]  # off before the timer is: a late signal after the block is ignored
    fired: list[BaseException] = []

    def expire(_signum: int, frame: FrameType | None) -> None:
        # Not while an earlier one is on its way up (in a `finally` or an `__exit__`): a
        # repeat there would replace it where nothing converts it any more.
        unwinding = isinstance(sys.exc_info()[1], raising)
        if armed[0] and not in_gc_callback(frame) and not unwinding:
            error = raising(_where(frame)) if issubclass(raising, _Expired) else raising()
            if not fired:
                fired.append(error)
                _end_drive(error)
            raise error

    started = time.monotonic()  # only to put an outer alarm back: never a decision
    previous = signal.signal(signum, expire)
    signal.setitimer(timer, seconds, 0.5)
    try:
        yield
        if fired:  # swallowed on its way up (a task kept it, a bare `except`): still a hang
            raise fired[0]
    finally:
        armed[0] = False
        signal.setitimer(timer, 0)
        signal.signal(signum, previous)
        if outer > 0:  # ITIMER_REAL: the outer alarm, due when it would have been
            left = outer - (time.monotonic() - started)
            signal.setitimer(timer, max(left, 1e-6), outer_interval)


def _seconds(env: str, default: float, environ: Mapping[str, str] | None) -> float:
    raw = (os.environ if environ is None else environ).get(env, "").strip()
    if not raw:
        return default
    try:
        seconds = float(raw)
    except ValueError:
        raise StepBudgetError(f"{env}={raw!r}: not a number of seconds") from None
    if seconds < 0:
        raise StepBudgetError(f"{env}={raw!r}: must be 0 (no budget) or more")
    return seconds


def step_budget_seconds(environ: Mapping[str, str] | None = None) -> float:
    """The CPU budget: `$HARNESS_STEP_BUDGET` (seconds, 0 for none), else the one `limited`
    puts in force, else the default."""
    limit = _LIMIT.get()
    return _seconds(STEP_BUDGET_ENV, STEP_BUDGET_SECONDS if limit is None else limit, environ)


def fixed_mutant_budget(environ: Mapping[str, str] | None = None) -> float | None:
    """`$HARNESS_STEP_BUDGET` where it is set: every mutant's budget (0: none); None: each
    run derives one (`derived_budget`), never under `MUTANT_STEP_FLOOR`."""
    if (os.environ if environ is None else environ).get(STEP_BUDGET_ENV, "").strip():
        return step_budget_seconds(environ)
    return None


def derived_budget(slowest: float, environ: Mapping[str, str] | None = None) -> float:
    """A mutant's step budget from the unmutated mesh's slowest step (CPU seconds), in
    whole seconds: `MUTANT_STEP_FACTOR` times it, between `MUTANT_STEP_FLOOR` and the
    budget in force (`step_budget_seconds`; no budget: no ceiling); the variable's budget
    where `$HARNESS_STEP_BUDGET` is set."""
    fixed = fixed_mutant_budget(environ)
    if fixed is not None:
        return fixed
    in_force = step_budget_seconds(environ)
    derived = float(math.ceil(max(MUTANT_STEP_FLOOR, MUTANT_STEP_FACTOR * slowest)))
    return min(in_force or float("inf"), derived)


@contextmanager
def limited(seconds: float) -> Iterator[None]:
    """Steps in the block get `seconds` of CPU (and the wall-clock budget that follows
    from it), unless `$HARNESS_STEP_BUDGET` names a budget."""
    token = _LIMIT.set(seconds)
    try:
        yield
    finally:
        _LIMIT.reset(token)


@contextmanager
def steps_seen() -> Iterator[Callable[[], StepsSeen]]:
    """Measure the steps run in the block: the callable gives, in the block and after it
    (however it ended), the CPU seconds of the slowest that ended (0 when none did) and
    whether one hung."""
    previous, _STEPS.seen = _STEPS.seen, StepsSeen()
    final: list[StepsSeen] = []
    try:
        yield lambda: final[0] if final else (_STEPS.seen or StepsSeen())
    finally:
        final.append(_STEPS.seen or StepsSeen())
        # An outer measure sees the steps of the inner one.
        _STEPS.seen = previous if previous is None else previous.joined(final[0])


def _saw(seconds: float = 0.0, hung: bool = False) -> None:
    if _STEPS.seen is not None:  # nothing built on a step's path unless measured
        _STEPS.seen = _STEPS.seen.joined(StepsSeen(seconds, hung))


def step_wall_budget_seconds(environ: Mapping[str, str] | None = None) -> float:
    """The wall-clock budget: `$HARNESS_STEP_WALL_BUDGET` (seconds, 0 for none), else
    `WALL_BUDGET_FACTOR` times the CPU budget (none when that is none)."""
    return step_budgets(environ).wall


def step_budgets(environ: Mapping[str, str] | None = None) -> StepBudgets:
    """Both budgets in force, each variable read once: what a run hands its steps."""
    cpu = step_budget_seconds(environ)
    return StepBudgets(cpu, _seconds(STEP_WALL_BUDGET_ENV, WALL_BUDGET_FACTOR * cpu, environ))


@contextmanager
def within_budget(what: str, budgets: StepBudgets | None = None) -> Iterator[None]:
    """Run the block; past the step budget (CPU, SIGPROF) or the wall-clock budget
    (SIGALRM), raise `MeshHung` naming `what`. `budgets` are the run's (by default, the
    ones in force now)."""
    budgets = step_budgets() if budgets is None else budgets
    seconds, wall = budgets.cpu, budgets.wall
    started = time.process_time()
    try:
        with (cpu_alarm(wall, signal.ITIMER_REAL, signal.SIGALRM, _WallExpired),
              cpu_alarm(seconds, signal.ITIMER_PROF, signal.SIGPROF, _Expired)):
            yield
        if _STEPS.seen is not None:
            _saw(time.process_time() - started)
    except _WallExpired as expired:
        _saw(hung=True)
        raise MeshHung(f"{what} did not return within {wall:g} seconds of wall-clock time: "
                       f"the mesh hung, blocked{_at(expired)} (sleeping, or waiting on a lock "
                       f"or I/O; set {STEP_WALL_BUDGET_ENV} to change the budget)") from None
    except _Expired as expired:
        _saw(hung=True)
        raise MeshHung(f"{what} did not return within {seconds:g} CPU seconds: the mesh "
                       f"hung{_at(expired)} (set {STEP_BUDGET_ENV} to change the budget)"
                       ) from None


def _at(expired: _Expired) -> str:
    return f" {expired.where}" if expired.where else ""
