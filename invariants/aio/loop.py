"""The virtual-time event loop: one ready callback per step, the order asked of a Chooser.

Time moves only when nothing is ready: the clock (integer microseconds) jumps to the
earliest live timer. Each step's `call_soon` callbacks form a lane, kept FIFO; the chooser
picks among lane heads, and so among timers due at the same instant (each due timer is a
lane of its own). Concatenated in creation order the lanes are asyncio's own call order,
so option 0 at every decision, `FirstChooser`'s, is plain FIFO. With a single option the
chooser is not asked; every decision with more is recorded in `schedule`. A decision at
an instant where a timeout fell due is a timer tie (its `why` says so: `TIMER_TIE`): what
runs before the timeout, and between it and the wake-up of the task it cancels, decides
whether a reply landing on its deadline counts.
"""

from __future__ import annotations

import asyncio
import heapq
import inspect
import math
import weakref
from collections import deque
from collections.abc import Callable, Coroutine, Generator
from contextvars import Context
from typing import Any, TypeVar, TypeVarTuple, Unpack

from invariants.adapter import TIMER_TIE, Chooser, FirstChooser
from invariants.aio import waits
from invariants.aio.errors import Runaway, Stuck
from invariants.aio.fences import FencedEventLoop
from invariants.aio.labels import describe
from invariants.aio.replay import NEVER, Replay
from invariants.aio.schedule import OVERTAKEN_NAMED, Decision, Legality, Schedule, format_time

_T = TypeVar("_T")
_Ts = TypeVarTuple("_Ts")

# Steps one virtual instant may take before the loop calls it a runaway.
DEFAULT_STEP_BUDGET = 200_000
# How many options a chooser's `why` names (the count is always given).
WHY_NAMED = 8
_US = 1_000_000

Lane = deque[asyncio.Handle]


class VirtualLoop(FencedEventLoop):
    """An asyncio event loop in virtual time whose ready order comes from `chooser`.

    `legality` is `Legality.LANES` (only schedules production can run) or
    `Legality.REORDER_ALL` (any ready callback next). `replay`, a recorded `Schedule`,
    takes every choice from the recording and raises `ScheduleDivergence` at the first step
    the run differs from it. `step_budget` steps may run at one virtual instant before
    `Runaway` (None: no bound).
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
        self._chooser: Chooser = chooser if chooser is not None else FirstChooser()
        self._legality = legality
        self._reorder_all = legality is Legality.REORDER_ALL
        self._clock_resolution = 1e-6
        self._now_us = 0
        # The lane being filled (what `call_soon` appends to: BaseEventLoop's `_ready`),
        # sealed into `_lanes` at the next step.
        self._ready: Lane = deque()
        self._lanes: deque[Lane] = deque()
        self._timers: list[tuple[int, int, asyncio.TimerHandle]] = []
        self._timer_count = 0
        self._timer_cancelled_count = 0
        self._step = 0
        # Whether a timeout fell due at this instant: its choices are timer ties.
        self._timeout_due = False
        self._task_count = 0
        self._step_budget = step_budget
        self._runaway_at = NEVER
        self._alarm_step = NEVER
        self._replay = Replay(replay) if replay is not None else None
        self.schedule = Schedule(legality=legality)
        self._deadline_us: int | None = None
        self._stop_when_idle = False
        self._reached = False
        # Every task's coroutine, for closing those that never started once the loop is
        # gone: a mesh dropped before its tasks ran (an adapter asked only for its
        # capabilities) then warns of none "never awaited".
        self._coroutines: list[Coroutine[Any, Any, Any] | Generator[Any, None, Any]] = []
        weakref.finalize(self, _close_all, self._coroutines)
        self._idle = False
        self._awaited: list[asyncio.Future[Any]] = []
        # What a harness kit attaches (a trace log, a fault book), found through the
        # running loop by code that must stay a no-op outside the harness.
        self.rig: object | None = None
        self._clock_moved()

    # The clock.

    def time(self) -> float:
        return self._now_us / _US

    @property
    def now_us(self) -> int:
        """Virtual time in integer microseconds."""
        return self._now_us

    @property
    def now_ms(self) -> int:
        """Virtual time in integer milliseconds (rounded down)."""
        return self._now_us // 1000

    @property
    def steps(self) -> int:
        """How many callbacks have run."""
        return self._step

    def _clock_moved(self) -> None:
        self._timeout_due = False
        budget = self._step_budget
        self._runaway_at = NEVER if budget is None else self._step + budget + 1
        self._arm_alarm()

    def _arm_alarm(self) -> None:
        replay_at = self._replay.next_step if self._replay is not None else NEVER
        self._alarm_step = min(self._runaway_at, replay_at)

    # Timers: a heap of (due microseconds, creation number, handle).

    def call_later(
        self, delay: float, callback: Callable[[Unpack[_Ts]], object], *args: *_Ts,
        context: Context | None = None,
    ) -> asyncio.TimerHandle:
        if delay is None:
            raise TypeError("delay must not be None")
        if math.isfinite(delay):
            return self._timer(self._now_us + round(delay * _US), callback, args, context)
        return self._timer(None if delay > 0 else self._now_us, callback, args, context)

    def call_at(
        self, when: float, callback: Callable[[Unpack[_Ts]], object], *args: *_Ts,
        context: Context | None = None,
    ) -> asyncio.TimerHandle:
        if when is None:
            raise TypeError("when cannot be None")
        if math.isfinite(when):
            return self._timer(round(when * _US), callback, args, context)
        return self._timer(None if when > 0 else self._now_us, callback, args, context)

    def _timer(
        self, when_us: int | None, callback: Callable[..., object], args: tuple[Any, ...],
        context: Context | None,
    ) -> asyncio.TimerHandle:
        """A timer due at `when_us` (None: never, as for an infinite delay)."""
        self._check_closed()  # type: ignore[attr-defined]
        if self._debug:  # type: ignore[attr-defined]
            self._check_thread()  # type: ignore[attr-defined]
            self._check_callback(callback, "call_at")  # type: ignore[attr-defined]
        when = math.inf if when_us is None else when_us / _US
        timer = asyncio.TimerHandle(when, callback, list(args), self, context)
        if timer._source_traceback:  # type: ignore[attr-defined]
            del timer._source_traceback[-1]  # type: ignore[attr-defined]
        if when_us is not None:
            self._timer_count += 1
            heapq.heappush(self._timers, (when_us, self._timer_count, timer))
            timer._scheduled = True  # type: ignore[attr-defined]
        return timer

    def _timer_handle_cancelled(self, handle: asyncio.TimerHandle) -> None:
        if not handle._scheduled:  # type: ignore[attr-defined]
            return
        self._timer_cancelled_count += 1
        timers = self._timers
        if self._timer_cancelled_count > 100 and 2 * self._timer_cancelled_count > len(timers):
            live = []
            for entry in timers:
                if entry[2]._cancelled or entry[2] is handle:
                    entry[2]._scheduled = False  # type: ignore[attr-defined]
                else:
                    live.append(entry)
            heapq.heapify(live)
            self._timers = live
            self._timer_cancelled_count = 0

    def _release_due(self) -> None:
        """Every timer due by now joins the ready lanes, one lane each."""
        timers, now, lanes = self._timers, self._now_us, self._lanes
        while timers and timers[0][0] <= now:
            timer = heapq.heappop(timers)[2]
            timer._scheduled = False  # type: ignore[attr-defined]
            if timer._cancelled:
                self._timer_cancelled_count -= 1
            else:
                lanes.append(deque((timer,)))
                if not self._timeout_due and _is_timeout(timer):
                    self._timeout_due = True

    # Tasks: named by the loop's own counter, not asyncio's process-wide one.

    def create_task(  # type: ignore[override]
        self, coro: Coroutine[Any, Any, _T] | Generator[Any, None, _T], *,
        name: str | None = None, context: Context | None = None, **kwargs: Any,
    ) -> asyncio.Task[_T]:
        self._task_count += 1
        self._coroutines.append(coro)
        if name is None:
            name = f"Task-{self._task_count}"
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
        lanes = self._lanes
        if fresh:
            lanes.append(fresh)
            self._ready = deque()
        timers = self._timers
        if timers and timers[0][0] <= self._now_us:
            self._release_due()
        handle: asyncio.Handle | None
        if len(lanes) == 1 and not (self._reorder_all and len(lanes[0]) > 1):
            lane = lanes[0]
            handle = lane.popleft()
            if not lane:
                lanes.clear()
            if handle._cancelled:
                return
        elif lanes:
            handle = self._choose()
            if handle is None:
                return
        else:
            self._when_idle()
            return
        step = self._step + 1
        self._step = step
        if step >= self._alarm_step:
            self._alarm(step, handle)
        handle._run()

    def _choose(self) -> asyncio.Handle | None:
        lanes = self._lanes
        emptied = False
        for lane in lanes:
            while lane and lane[0]._cancelled:
                lane.popleft()
            if not lane:
                emptied = True
        if emptied:
            lanes = self._lanes = deque(lane for lane in lanes if lane)
        if not lanes:
            return None
        if self._reorder_all:
            return self._choose_any(lanes)
        count = len(lanes)
        pick = 0 if count == 1 else self._decide(count, lambda i: lanes[i][0])
        lane = lanes[pick]
        handle = lane.popleft()
        if not lane:
            del lanes[pick]
        return handle

    def _choose_any(self, lanes: deque[Lane]) -> asyncio.Handle | None:
        ready = [
            (lane, handle) for lane in lanes for handle in lane
            if not handle._cancelled
        ]
        if not ready:
            lanes.clear()
            return None
        count = len(ready)
        pick = 0 if count == 1 else self._decide(count, lambda i: ready[i][1])
        lane, handle = ready[pick]
        lane.remove(handle)
        if not lane:
            lanes.remove(lane)
        return handle

    def _decide(self, count: int, option: Callable[[int], asyncio.Handle]) -> int:
        step, now = self._step + 1, self._now_us
        replay = self._replay
        recorded: Decision | None = None
        if replay is not None:
            recorded = replay.decide(step, now, count)
            pick = recorded.chosen
        else:
            named = ", ".join(describe(option(i)) for i in range(min(count, WHY_NAMED)))
            more = f" and {count - WHY_NAMED} more" if count > WHY_NAMED else ""
            kind = TIMER_TIE if self._timeout_due else "aio ready order"
            why = f"{kind} at t={format_time(now)}, step {step}: {named}{more}"
            pick = self._chooser.choose(count, why)
            if not (isinstance(pick, int) and 0 <= pick < count):
                raise ValueError(
                    f"chooser picked {pick!r} of {count} ready callbacks (0..{count - 1})"
                )
        ran = describe(option(pick))
        overtaken = tuple(describe(option(i)) for i in range(min(pick, OVERTAKEN_NAMED)))
        if replay is not None and recorded is not None:
            replay.confirm(recorded, step, now, ran, overtaken)
            self._arm_alarm()
        self.schedule.decisions.append(Decision(step, now, count, pick, ran, overtaken))
        return pick

    def _alarm(self, step: int, handle: asyncio.Handle) -> None:
        """A runaway, or a replayed run reaching a recorded decision with one option."""
        # Put the step back, so cleanup after the error still finds it.
        self._step = step - 1
        self._lanes.appendleft(deque((handle,)))
        if self._replay is not None and step == self._replay.next_step:
            raise self._replay.forced(step, self._now_us, describe(handle))
        heads = ", ".join(describe(lane[0]) for lane in list(self._lanes)[:WHY_NAMED])
        raise Runaway(
            f"{self._step_budget} steps without virtual time moving "
            f"(t={format_time(self._now_us)}, steps {step - (self._step_budget or 0)}"
            f"–{step - 1}); ready now: {heads}"
        )

    def _when_idle(self) -> None:
        """Nothing is ready: jump to the earliest live timer, or end the drive, or stuck."""
        timers = self._timers
        while timers and timers[0][2]._cancelled:
            heapq.heappop(timers)[2]._scheduled = False  # type: ignore[attr-defined]
            self._timer_cancelled_count -= 1
        deadline = self._deadline_us
        if timers and (deadline is None or timers[0][0] <= deadline):
            self._now_us = timers[0][0]
            self._clock_moved()
            self._release_due()
            return
        if deadline is None:
            raise Stuck(self._stuck_report())
        if self._stop_when_idle and not timers:
            self._idle = True
        elif deadline > self._now_us:
            self._now_us = deadline
            self._clock_moved()
        self._reached = True
        self._stopping = True

    def _stuck_report(self) -> str:
        awaited = [f for f in self._awaited if not f.done()]
        if awaited:
            what = ", ".join(
                f"{f.get_name()}" if isinstance(f, asyncio.Task) else repr(f) for f in awaited
            )
            head = f"the awaited work ({what}) is unfinished"
        else:
            head = "the loop was asked to run for ever"
        return (
            f"stuck at t={format_time(self._now_us)} after {self._step} steps: nothing is "
            f"ready, no timer is armed, and {head}.\n"
            + waits.report(asyncio.all_tasks(self))
        )

    # Entry points.

    def run_until_complete(self, future: Any) -> Any:
        """As asyncio's, but a run that can never finish raises `Stuck`, naming every
        pending task and where it waits."""
        if self._deadline_us is not None:
            raise RuntimeError("run_until_complete while the loop is driven to a deadline")
        new_task = not asyncio.isfuture(future)
        awaited: asyncio.Future[Any] = asyncio.ensure_future(future, loop=self)
        if new_task:
            awaited._log_destroy_pending = False  # type: ignore[attr-defined]
        self._awaited.append(awaited)
        try:
            result = super().run_until_complete(awaited)
        finally:
            self._awaited.pop()
        self.raise_fenced()
        return result

    def advance(self, ms: int) -> None:
        """Run everything due within the next `ms` virtual milliseconds (inclusive); the
        clock then reads exactly `ms` later."""
        self.advance_us(ms * 1000)

    def advance_us(self, us: int) -> None:
        if us < 0:
            raise ValueError(f"advance: the time must be >= 0, got {us} us")
        self._drive(self._now_us + us, stop_when_idle=False)

    def run_until_idle(self, limit_ms: int) -> bool:
        """Run until nothing is ready and no timer is armed (True; the clock stays at the
        last step) or `limit_ms` virtual milliseconds passed (False)."""
        if limit_ms < 0:
            raise ValueError(f"run_until_idle: limit_ms must be >= 0, got {limit_ms}")
        return self._drive(self._now_us + limit_ms * 1000, stop_when_idle=True)

    def _drive(self, deadline_us: int, *, stop_when_idle: bool) -> bool:
        self._deadline_us, self._stop_when_idle = deadline_us, stop_when_idle
        self._reached = self._idle = False
        try:
            while not self._reached:  # a callback's loop.stop() ends one run_forever only
                self.run_forever()
        finally:
            self._deadline_us, self._stop_when_idle = None, False
        self.raise_fenced()
        return self._idle

    def fresh_lane(self) -> None:
        """Callbacks scheduled from outside the loop after this call form a new lane:
        independent of those scheduled before (two posts, say), so either may go first."""
        if self._ready:
            self._lanes.append(self._ready)
            self._ready = deque()

    def raise_fenced(self) -> None:
        """Raise the first fenced call since the last check, even if the program caught it."""
        if self._fence_errors:
            error = self._fence_errors[0]
            self._fence_errors.clear()
            raise error

    def check_replay_finished(self) -> None:
        """In replay, raise when recorded decisions are left over at the end of the run."""
        if self._replay is not None:
            error = self._replay.unfinished(self._step, self._now_us)
            if error is not None:
                raise error

    def stop_choosing(self) -> None:
        """From now on FIFO, no replay, nothing recorded: for cleanup after a run."""
        self._chooser = FirstChooser()
        self._replay = None
        self.schedule = Schedule(legality=self._legality)
        self._step_budget = None
        self._clock_moved()

    def close(self) -> None:
        super().close()
        self._lanes.clear()
        self._timers.clear()

    def __del__(self) -> None:
        # BaseEventLoop warns about an unclosed loop; a virtual loop holds no resource.
        pass


def _close_all(coroutines: list[Coroutine[Any, Any, Any] | Generator[Any, None, Any]]) -> None:
    """Close the coroutines that never started (closing one runs none of its code); one
    suspended mid-way is left to the garbage collector, as on a stock loop."""
    for coroutine in coroutines:
        if isinstance(coroutine, Coroutine):
            created = inspect.getcoroutinestate(coroutine) == inspect.CORO_CREATED
        else:
            created = inspect.getgeneratorstate(coroutine) == inspect.GEN_CREATED
        if created:
            coroutine.close()


# The callbacks asyncio's timeouts fire: `asyncio.timeout` (and `wait_for` on 3.12+, built
# on it) and 3.11's own `wait_for`.
_TIMEOUT_CALLBACKS = frozenset(
    f for f in (getattr(asyncio.Timeout, "_on_timeout", None),
                getattr(asyncio.tasks, "_release_waiter", None)) if f is not None
)


def _is_timeout(handle: asyncio.Handle) -> bool:
    callback = getattr(handle._callback, "__func__", handle._callback)  # type: ignore[attr-defined]
    return callback in _TIMEOUT_CALLBACKS

