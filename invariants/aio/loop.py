"""The virtual-time event loop: one ready callback per step, the order asked of a Chooser.

Time moves only when nothing is ready: the clock (integer microseconds) jumps to the
earliest live timer. Each step's `call_soon` callbacks form a lane, kept FIFO; the chooser
picks among lane heads, and so among timers due at the same instant (each due timer is a
lane of its own). Concatenated in creation order the lanes are asyncio's own call order,
so option 0 at every decision, `FirstChooser`'s, is plain FIFO. With a single option the
chooser is not asked; every decision with more is recorded in `schedule`. A decision at
an instant where a timeout fell due, or where timers armed at different instants fell due
together, is a timer tie (its `why` says so: `TIMER_TIE`): what runs before the timeout,
and between it and the wake-up of the task it cancels, decides whether a reply landing on
its deadline counts; two chains of work meeting (a cooldown ending as a post lands) race
the same way.
"""

from __future__ import annotations

import asyncio
import math
from collections import deque
from collections.abc import Callable, Coroutine, Generator
from contextvars import Context
from typing import Any, TypeVar, TypeVarTuple, Unpack

from invariants.adapter import Chooser, FirstChooser
from invariants.aio.clock import US, Clock
from invariants.aio.diagnostics import DEFAULT_STEP_BUDGET, StepBudget, stuck_message
from invariants.aio.drive import Drive
from invariants.aio.errors import Stuck
from invariants.aio.fences import FencedEventLoop
from invariants.aio.lanes import Lane, ReadyOrder
from invariants.aio.schedule import Legality, Schedule
from invariants.aio.tasks import TaskBook

__all__ = ["DEFAULT_STEP_BUDGET", "VirtualLoop"]

_T = TypeVar("_T")
_Ts = TypeVarTuple("_Ts")


class VirtualLoop(FencedEventLoop):
    """An asyncio event loop in virtual time whose ready order comes from `chooser`.

    `legality` is `Legality.LANES` (only schedules production can run) or `Legality.REORDER_ALL`
    (any ready callback next). `replay`, a recorded `Schedule`, takes every choice from the
    recording and raises `ScheduleDivergence` at the first step the run differs from it.
    `step_budget` steps may run at one virtual instant before `Runaway` (None: no bound).
    """

    def __init__(
        self,
        chooser: Chooser | None = None,
        *,
        legality: Legality = Legality.LANES,
        replay: Schedule | None = None,
        step_budget: int | None = DEFAULT_STEP_BUDGET,
    ) -> None:
        super().__init__()
        self._clock_resolution = 1e-6
        self._clock = Clock()
        # The lane being filled (what `call_soon` appends to: BaseEventLoop's `_ready`),
        # sealed into the ready order at the next step.
        self._ready: Lane = deque()
        self._order = ReadyOrder(
            self._clock, chooser if chooser is not None else FirstChooser(), legality, replay,
        )
        self._budget = StepBudget(step_budget)
        self._step = 0
        self._tasks = TaskBook(self)
        self._drive = Drive()
        # What a harness kit attaches (a trace log, a fault book), found through the
        # running loop by code that must stay a no-op outside the harness.
        self.rig: object | None = None
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

    def _clock_moved(self) -> None:
        self._clock.moved()
        self._budget.restart(self._step, self._order.replay_at)

    # Timers.

    def call_later(
        self, delay: float, callback: Callable[[Unpack[_Ts]], object], *args: *_Ts,
        context: Context | None = None,
    ) -> asyncio.TimerHandle:
        return self._timer(self._clock.after(delay), callback, args, context)

    def call_at(
        self, when: float, callback: Callable[[Unpack[_Ts]], object], *args: *_Ts,
        context: Context | None = None,
    ) -> asyncio.TimerHandle:
        return self._timer(self._clock.at(when), callback, args, context)

    def _timer(
        self, when_us: int | None, callback: Callable[..., object], args: tuple[Any, ...],
        context: Context | None,
    ) -> asyncio.TimerHandle:
        """A timer due at `when_us` (None: never, as for an infinite delay)."""
        self._check_closed()  # type: ignore[attr-defined]
        if self._debug:  # type: ignore[attr-defined]
            self._check_thread()  # type: ignore[attr-defined]
            self._check_callback(callback, "call_at")  # type: ignore[attr-defined]
        when = math.inf if when_us is None else when_us / US
        timer = asyncio.TimerHandle(when, callback, list(args), self, context)
        if timer._source_traceback:  # type: ignore[attr-defined]
            del timer._source_traceback[-1]  # type: ignore[attr-defined]
        if when_us is not None:
            self._clock.arm(when_us, timer)
        return timer

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
        fresh = self._ready
        order = self._order
        lanes = order.lanes
        if fresh:
            lanes.append(fresh)
            self._ready = deque()
        clock = self._clock
        timers = clock.timers
        if timers and timers[0][0] <= clock.now_us:
            order.add_timers(clock.release_due())
        handle: asyncio.Handle | None
        if len(lanes) == 1 and not (order.reorder_all and len(lanes[0]) > 1):
            lane = lanes[0]
            handle = lane.popleft()
            if not lane:
                lanes.clear()
            if handle._cancelled:
                return
        elif lanes:
            handle = order.choose(self._step + 1)
            if handle is None:
                return
            if order.replay is not None:  # a replayed choice moves the next one recorded
                self._budget.rearm(order.replay_at)
        else:
            self._when_idle()
            return
        step = self._step + 1
        self._step = step
        if step >= self._budget.alarm_step:
            self._alarm(step, handle)
        handle._run()

    def _alarm(self, step: int, handle: asyncio.Handle) -> None:
        """A runaway, or a replayed run reaching a recorded decision with one option."""
        # Put the step back, so cleanup after the error still finds it.
        self._step = step - 1
        self._order.put_back(handle)
        forced = self._order.forced(step, handle)
        if forced is not None:
            raise forced
        raise self._budget.runaway(step, self._clock.now_us, self._order.heads())

    def _when_idle(self) -> None:
        """Nothing is ready: jump to the earliest live timer, or end the drive, or stuck."""
        clock, drive = self._clock, self._drive
        due = clock.next_due()
        if due is not None and drive.wakes(due):
            clock.now_us = due
            self._clock_moved()
            self._order.add_timers(clock.release_due())
            return
        if drive.deadline_us is None:
            raise Stuck(stuck_message(
                clock.now_us, self._step, drive.awaited, asyncio.all_tasks(self),
            ))
        end = drive.end(due, clock.now_us)
        if end > clock.now_us:
            clock.now_us = end
            self._clock_moved()
        self._stopping = True

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
        try:
            result = super().run_until_complete(awaited)
        finally:
            self._drive.awaited.pop()
            self._tasks.forget_started()
        self.raise_fenced()
        return result

    def advance(self, ms: int) -> None:
        """Run everything due within the next `ms` virtual milliseconds (inclusive); the
        clock then reads exactly `ms` later."""
        self.advance_us(ms * 1000)

    def advance_us(self, us: int) -> None:
        if us < 0:
            raise ValueError(f"advance: the time must be >= 0, got {us} us")
        self._drive_to(self._clock.now_us + us, until_idle=False)

    def run_until_idle(self, limit_ms: int) -> bool:
        """Run until nothing is ready and no timer is armed (True; the clock stays at the
        last step) or `limit_ms` virtual milliseconds passed (False)."""
        if limit_ms < 0:
            raise ValueError(f"run_until_idle: limit_ms must be >= 0, got {limit_ms}")
        return self._drive_to(self._clock.now_us + limit_ms * 1000, until_idle=True)

    def _drive_to(self, deadline_us: int, *, until_idle: bool) -> bool:
        try:
            idle = self._drive.run(self, deadline_us, until_idle=until_idle)
        finally:
            self._tasks.forget_started()
        self.raise_fenced()
        return idle

    def fresh_lane(self) -> None:
        """Callbacks scheduled from outside the loop after this call form a new lane:
        independent of those scheduled before (two posts, say), so either may go first."""
        if self._ready:
            self._order.lanes.append(self._ready)
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
        self._order.lanes.clear()
        self._clock.timers.clear()

    def __del__(self) -> None:
        # BaseEventLoop warns about an unclosed loop; a virtual loop holds no resource.
        pass
