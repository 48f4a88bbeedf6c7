"""The virtual-time event loop: one ready callback per step, the order asked of a Chooser.

Time moves only when nothing is ready: the clock (integer microseconds) jumps to the
earliest live timer. The ready queue is FIFO and runs in iterations, as asyncio's does;
the chooser decides only where due timers and calls from outside the loop land in it
(`invariants.aio.lanes`), so option 0 at every decision, `FirstChooser`'s, is the stock
loop's order. With a single option the chooser is not asked; every decision with more is
recorded in `schedule`. A decision at an instant where a timeout fell due, or where timers
armed at different instants fell due together, is a timer tie (its `why` says so:
`TIMER_TIE`): what lands before the timeout, and what runs between it and the wake-up of
the task it cancels, decides whether a reply landing on its deadline counts; two chains of
work meeting (a cooldown ending as a post lands) race the same way.
"""

from __future__ import annotations

import asyncio
import math
import time
from asyncio.base_events import _format_handle  # type: ignore[attr-defined]
from asyncio.log import logger
from collections import deque
from collections.abc import Callable, Coroutine, Generator
from contextvars import Context
from typing import Any, TypeVar, TypeVarTuple, Unpack

from invariants.adapter import Chooser, FirstChooser
from invariants.aio import arguments, outside
from invariants.aio.asyncgens import AsyncGenHooks
from invariants.aio.clock import US, Clock
from invariants.aio.diagnostics import (
    DEFAULT_STEP_BUDGET,
    DEFAULT_TIME_LIMIT,
    StepBudget,
    overtime_message,
    stuck_message,
)
from invariants.aio.drive import Drive
from invariants.aio.errors import Stuck
from invariants.aio.fences import FencedEventLoop
from invariants.aio.lanes import JudgedTimer, Lane, ReadyOrder, Verdict
from invariants.aio.schedule import Legality, Schedule
from invariants.aio.tasks import TaskBook

__all__ = ["DEFAULT_STEP_BUDGET", "DEFAULT_TIME_LIMIT", "VirtualLoop"]

_T = TypeVar("_T")
_perf_counter = time.perf_counter  # bound now: the real clock, whatever patches `time` later
_HORIZON = 1e12  # seconds: a finite delay below it is a plain sum of microseconds
_Ts = TypeVarTuple("_Ts")


class VirtualLoop(AsyncGenHooks, FencedEventLoop):
    """An asyncio event loop in virtual time whose ready order comes from `chooser`.

    `legality` is `Legality.PRODUCTION` (only schedules production can run) or
    `Legality.REORDER_ALL` (any ready callback next). `replay`, a recorded `Schedule`,
    takes every choice from the recording and raises `ScheduleDivergence` at the first step
    the run differs from it.
    `step_budget` steps may run at one virtual instant before `Runaway` (None: no bound).
    `time_limit` seconds of virtual time may pass in `run_until_complete` before it raises
    `Stuck` (None: no bound): awaited work that cannot finish while timers keep firing (a
    heartbeat beside a `main` waiting for ever) would otherwise run for ever.
    """

    def __init__(
        self,
        chooser: Chooser | None = None,
        *,
        legality: Legality | str = Legality.PRODUCTION,
        replay: Schedule | None = None,
        step_budget: int | None = DEFAULT_STEP_BUDGET,
        time_limit: float | None = DEFAULT_TIME_LIMIT,
    ) -> None:
        if time_limit is not None and not (
            isinstance(time_limit, int | float) and not isinstance(time_limit, bool)
            and 0 < time_limit < math.inf
        ):
            raise ValueError(
                f"time_limit must be a positive number of seconds or None, got {time_limit!r}"
            )
        legality = arguments.legality(legality)
        step_budget = arguments.step_budget(step_budget)
        super().__init__()
        self._clock_resolution = 1e-6
        self._clock = Clock()
        self._order = ReadyOrder(
            self._clock, chooser if chooser is not None else FirstChooser(), legality, replay,
        )
        # What `call_soon` appends to (BaseEventLoop's `_ready`): while the loop runs, the
        # FIFO queue itself; between drives, work from outside, which arrives as the next
        # drive starts (`fresh_lane` makes each batch an arrival of its own).
        self._ready: Lane = deque()
        self._stop_asked = False  # `stop()`, obeyed as the iteration ends (as asyncio does)
        self._iterated = False  # an iteration began in this drive (a stop before it: one)
        self._budget = StepBudget(step_budget)
        # How much virtual time `run_until_complete` may take (None: no bound), and the
        # instant the outermost one under way must end by.
        self._time_limit_us = None if time_limit is None else round(time_limit * US)
        self._limit_at: int | None = None
        self._step = 0
        self._tasks = TaskBook(self)
        self._drive = Drive()
        # What a harness kit attaches (a trace log, a fault book), found through the
        # running loop by code that must stay a no-op outside the harness.
        self.rig: object | None = None
        # An error that must end the drive once the callback running now returns (see
        # `abort_step`).
        self._abort: BaseException | None = None
        self._clock_moved()

    # The clock, and what has run.

    def time(self) -> float:
        return self._clock.now_us / US

    @property
    def now_us(self) -> int:
        """Virtual time in integer microseconds."""
        return self._clock.now_us

    @property
    def now_ms(self) -> int:
        """Virtual time in integer milliseconds (rounded down)."""
        return self._clock.now_us // 1000

    @property
    def steps(self) -> int:
        """How many callbacks have run."""
        return self._step

    @property
    def schedule(self) -> Schedule:
        """Every choice among more than one option so far."""
        return self._order.schedule

    @property
    def network_verdicts_held(self) -> int:
        """How many of the simulated network's verdicts were not the nominal delivery."""
        return self._order.verdicts_held

    def _clock_moved(self) -> None:
        self._clock.moved()
        self._budget.restart(self._step, self._order.replay_at)

    # Timers.

    def call_later(
        self, delay: float, callback: Callable[[Unpack[_Ts]], object], *args: *_Ts,
        context: Context | None = None,
    ) -> asyncio.TimerHandle:
        clock = self._clock
        if delay.__class__ is float and 0.0 < delay < _HORIZON:  # the common case, inline
            # A positive delay moves time, by a microsecond at least: a float residue of a
            # deadline (`deadline - loop.time()`, about 1e-15 s) would otherwise fall due in
            # its own instant again and again, where a real clock goes on ticking.
            return self._timer(clock.now_us + (round(delay * US) or 1), callback, args,
                               context)
        return self._timer(clock.after(delay), callback, args, context)

    def call_at(
        self, when: float, callback: Callable[[Unpack[_Ts]], object], *args: *_Ts,
        context: Context | None = None,
    ) -> asyncio.TimerHandle:
        return self._timer(self._clock.at(when), callback, args, context)

    def _timer(
        self, when_us: int | None, callback: Callable[..., object], args: tuple[Any, ...],
        context: Context | None, kind: type[asyncio.TimerHandle] = asyncio.TimerHandle,
    ) -> asyncio.TimerHandle:
        """A timer (of class `kind`) due at `when_us` (None: never, as for an infinite
        delay)."""
        self._check_closed()  # type: ignore[attr-defined]
        if self._debug:  # type: ignore[attr-defined]
            self._check_thread()  # type: ignore[attr-defined]
            self._check_callback(callback, "call_at")  # type: ignore[attr-defined]
        when = math.inf if when_us is None else when_us / US
        timer = kind(when, callback, list(args), self, context)
        if timer._source_traceback:  # type: ignore[attr-defined]
            del timer._source_traceback[-1]  # type: ignore[attr-defined]
        if when_us is not None:
            self._clock.arm(when_us, timer)
        return timer

    def call_judged(
        self, delay_us: int, verdict: Verdict, callback: Callable[..., object], *args: Any,
        context: Context | None = None,
    ) -> asyncio.TimerHandle:
        """A timer `delay_us` from now that lands as `verdict` decides when it falls due
        (the simulated network's delivery of a segment, `invariants.aio.net`): a choice
        recorded in `schedule` like the others."""
        timer = self._timer(self._clock.now_us + delay_us, callback, args, context, JudgedTimer)
        timer.verdict = verdict  # type: ignore[attr-defined]
        self._order.judging = True
        return timer

    def due_instants_us(self) -> list[int]:
        """When the live timers armed now fall due, after the current instant: each
        instant once, soonest first (what a harness may aim work at)."""
        now = self._clock.now_us
        return sorted({when for when, _n, timer, _armed in self._clock.timers
                       if when > now and not timer._cancelled})

    def timers_armed(self) -> list[asyncio.TimerHandle]:
        """The live timers armed now (not cancelled, not yet run), soonest first."""
        return [timer for _when, _n, timer, _armed in sorted(self._clock.timers)
                if not timer._cancelled]

    def _timer_handle_cancelled(self, handle: asyncio.TimerHandle) -> None:
        self._clock.cancelled(handle)

    # Tasks: named by the loop's own counter, not asyncio's process-wide one.

    def create_task(  # type: ignore[override]
        self, coro: Coroutine[Any, Any, _T] | Generator[Any, None, _T], *,
        name: str | None = None, context: Context | None = None, **kwargs: Any,
    ) -> asyncio.Task[_T]:
        name = self._tasks.add(coro, name)
        task: asyncio.Task[_T] = super().create_task(
            coro, name=name, context=context, **kwargs,
        )
        # A virtual loop is dropped with its tasks pending as a matter of course (an
        # adapter has no close): that is not worth a log line per task.
        task._log_destroy_pending = False  # type: ignore[attr-defined]
        return task

    # One step.

    def _run_once(self) -> None:
        order = self._order
        if not order.todo:  # an iteration begins: arrivals land, or time moves
            if self._stop_asked and self._iterated:
                self._stopping = True
                return
            self._iterated = True
            order.begin_iteration(self._step + 1)
            if not order.fifo:
                if not self._when_idle():
                    return
                order.begin_iteration(self._step + 1)  # what fell due at the new instant
            if order.replay is not None:  # a replayed choice moves the next one recorded
                self._budget.rearm(order.replay_at)
            if not order.fifo:
                return
        handle = order.next_handle(self._step + 1)
        if handle._cancelled:
            return
        step = self._step + 1
        self._step = step
        if step >= self._budget.alarm_step:
            self._alarm(step, handle)
        if self._debug:  # type: ignore[attr-defined]
            self._run_timed(handle)
        else:
            handle._run()
        if self._abort is not None:
            self._raise_abort(handle)

    def _run_timed(self, handle: asyncio.Handle) -> None:
        """Debug mode: asyncio's slow-callback warning, on the real time a callback took
        (virtual time stands still within a step)."""
        started = _perf_counter()
        handle._run()
        took = _perf_counter() - started
        if took >= self.slow_callback_duration:
            logger.warning("Executing %s took %.3f seconds", _format_handle(handle), took)

    def stop(self) -> None:
        """Stop once the callbacks of the iteration under way have run, as asyncio does."""
        self._stop_asked = True

    def run_forever(self) -> None:
        self._begin_drive()
        try:
            super().run_forever()
        finally:
            self._end_drive()

    def _begin_drive(self) -> None:
        """Work scheduled from outside since the last drive arrives; the loop's own
        scheduling goes to the FIFO queue."""
        self.fresh_lane()
        self._ready = self._order.fifo
        self._iterated = False

    def _end_drive(self) -> None:
        self._ready = deque()
        self._stop_asked = False

    def abort_step(self, error: BaseException) -> None:
        """End the drive with `error` as soon as the callback running now returns. For an
        error that must reach whoever drives the loop from wherever it was raised (the
        harness's step budget, which may land inside a task: a task keeps an exception
        raised in it as its result, and the loop would carry on)."""
        self._abort = error

    def _raise_abort(self, handle: asyncio.Handle) -> None:
        error, self._abort = self._abort, None
        task = getattr(handle._callback, "__self__", None)  # type: ignore[attr-defined]
        if isinstance(task, asyncio.Task) and task.done() and not task.cancelled():
            task.exception()  # retrieved: the error is raised here, not logged at exit
        assert error is not None
        raise error

    def _alarm(self, step: int, handle: asyncio.Handle) -> None:
        """A runaway, or a replayed run reaching a recorded decision with one option."""
        # Put the step back, so cleanup after the error still finds it.
        self._step = step - 1
        self._order.put_back(handle)
        forced = self._order.forced(step, handle)
        if forced is not None:
            raise forced
        raise self._budget.runaway(step, self._clock.now_us, self._order.heads())

    def _when_idle(self) -> bool:
        """Nothing is ready: jump to the earliest live timer (True: its iteration lands
        it), or end the drive (False), or stuck. First, what another thread did or may
        still do is raised: time must not move past work it may yet deliver."""
        outside.before_idle(self)
        clock, drive = self._clock, self._drive
        due = clock.next_due()
        if due is not None and drive.wakes(due):
            if self._limit_at is not None and due > self._limit_at:
                raise Stuck(overtime_message(
                    clock.now_us, self._step, self._time_limit_us or 0, drive.awaited,
                    asyncio.all_tasks(self),
                ))
            clock.now_us = due
            self._clock_moved()
            return True
        if drive.deadline_us is None:
            raise Stuck(stuck_message(
                clock.now_us, self._step, drive.awaited, asyncio.all_tasks(self),
            ))
        end = drive.end(due, clock.now_us)
        if end > clock.now_us:
            clock.now_us = end
            self._clock_moved()
        self._stopping = True
        return False

    # Entry points.

    def run_until_complete(self, future: Any) -> Any:
        """As asyncio's, but a run that can never finish raises `Stuck`, naming every
        pending task and where it waits."""
        if self._drive.deadline_us is not None:
            raise RuntimeError("run_until_complete while the loop is driven to a deadline")
        new_task = not asyncio.isfuture(future)
        awaited: asyncio.Future[Any] = asyncio.ensure_future(future, loop=self)
        if new_task:
            awaited._log_destroy_pending = False  # type: ignore[attr-defined]
        self._drive.awaited.append(awaited)
        outermost = self._limit_at is None and self._time_limit_us is not None
        if outermost:
            self._limit_at = self._clock.now_us + (self._time_limit_us or 0)
        try:
            result = super().run_until_complete(awaited)
        finally:
            if outermost:
                self._limit_at = None
            self._drive.awaited.pop()
            self._tasks.forget_started()
            self._abort = None
        self.raise_fenced()
        return result

    def advance(self, ms: int) -> None:
        """Run everything due within the next `ms` virtual milliseconds (inclusive); the
        clock then reads exactly `ms` later."""
        self.advance_us(arguments.whole("advance", "ms", ms, "milliseconds") * 1000)

    def advance_us(self, us: int) -> None:
        us = arguments.whole("advance_us", "us", us, "microseconds")
        self._drive_to(self._clock.now_us + us, until_idle=False)

    def run_until_idle(self, limit_ms: int) -> bool:
        """Run until nothing is ready and no timer is armed (True; the clock stays at the
        last step) or `limit_ms` virtual milliseconds passed (False)."""
        limit_ms = arguments.whole("run_until_idle", "limit_ms", limit_ms, "milliseconds")
        return self._drive_to(self._clock.now_us + limit_ms * 1000, until_idle=True)

    def _drive_to(self, deadline_us: int, *, until_idle: bool) -> bool:
        try:
            idle = self._drive.run(self, deadline_us, until_idle=until_idle)
        finally:
            self._tasks.forget_started()
            self._abort = None
        self.raise_fenced()
        return idle

    def fresh_lane(self) -> None:
        """Callbacks scheduled from outside the loop after this call arrive apart from
        those scheduled before (two posts, say): either may land first. From inside a
        running step, nothing: what a step schedules is the FIFO queue's."""
        ready = self._ready
        if ready and ready is not self._order.fifo:
            self._order.outside(ready)
            self._ready = deque()

    def check_replay_finished(self) -> None:
        """In replay, raise when recorded decisions are left over at the end of the run."""
        error = self._order.unfinished(self._step)
        if error is not None:
            raise error

    def stop_choosing(self) -> None:
        """From now on FIFO, no replay, nothing recorded: for cleanup after a run."""
        self._order.stop_choosing()
        self._budget.steps = None
        self._clock_moved()

    def close(self) -> None:
        super().close()
        self._order.clear()
        self._clock.timers.clear()

    def __del__(self) -> None:
        # BaseEventLoop warns about an unclosed loop; a virtual loop holds no resource.
        pass
