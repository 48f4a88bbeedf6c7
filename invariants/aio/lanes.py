"""The ready order: ready callbacks in lanes, and which one runs next.

Each step's `call_soon` callbacks form a lane, kept FIFO; each due timer is a lane of its
own. The chooser picks among lane heads (among every ready callback under
`Legality.REORDER_ALL`), or a replayed recording does, and each choice among more than one
option is recorded in `schedule`.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Iterable

from invariants.adapter import TIMER_TIE, Chooser, FirstChooser
from invariants.aio.clock import Clock
from invariants.aio.errors import ScheduleDivergence
from invariants.aio.labels import describe
from invariants.aio.replay import NEVER, Replay
from invariants.aio.schedule import OVERTAKEN_NAMED, Decision, Legality, Schedule, format_time

# How many options a chooser's `why` names (the count is always given).
WHY_NAMED = 8

Lane = deque[asyncio.Handle]


class ReadyOrder:
    """The sealed lanes, oldest first, and the choice among them at the clock's instant."""

    def __init__(
        self, clock: Clock, chooser: Chooser, legality: Legality, replay: Schedule | None,
    ) -> None:
        self.lanes: deque[Lane] = deque()
        self._clock = clock
        self._chooser = chooser
        self._legality = legality
        self.reorder_all = legality is Legality.REORDER_ALL
        self.replay = Replay(replay) if replay is not None else None
        self.schedule = Schedule(legality=legality)

    @property
    def replay_at(self) -> int:
        """The step of the replay's next recorded choice (NEVER when not replaying)."""
        return self.replay.next_step if self.replay is not None else NEVER

    def add_timers(self, timers: Iterable[asyncio.TimerHandle]) -> None:
        self.lanes.extend(deque((timer,)) for timer in timers)

    def choose(self, step: int) -> asyncio.Handle | None:
        """The handle to run at `step`, taken off its lane; None when every ready callback
        was cancelled."""
        lanes = self.lanes
        emptied = False
        for lane in lanes:
            while lane and lane[0]._cancelled:
                lane.popleft()
            if not lane:
                emptied = True
        if emptied:
            lanes = self.lanes = deque(lane for lane in lanes if lane)
        if not lanes:
            return None
        if self.reorder_all:
            return self._choose_any(lanes, step)
        count = len(lanes)
        pick = 0 if count == 1 else self._decide(step, count, lambda i: lanes[i][0])
        lane = lanes[pick]
        handle = lane.popleft()
        if not lane:
            del lanes[pick]
        return handle

    def _choose_any(self, lanes: deque[Lane], step: int) -> asyncio.Handle | None:
        ready = [
            (lane, handle) for lane in lanes for handle in lane
            if not handle._cancelled
        ]
        if not ready:
            lanes.clear()
            return None
        count = len(ready)
        pick = 0 if count == 1 else self._decide(step, count, lambda i: ready[i][1])
        lane, handle = ready[pick]
        lane.remove(handle)
        if not lane:
            lanes.remove(lane)
        return handle

    def _decide(self, step: int, count: int, option: Callable[[int], asyncio.Handle]) -> int:
        now = self._clock.now_us
        replay = self.replay
        recorded: Decision | None = None
        if replay is not None:
            recorded = replay.decide(step, now, count)
            pick = recorded.chosen
        else:
            named = ", ".join(describe(option(i)) for i in range(min(count, WHY_NAMED)))
            more = f" and {count - WHY_NAMED} more" if count > WHY_NAMED else ""
            kind = TIMER_TIE if self._clock.tie else "aio ready order"
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
        self.schedule.decisions.append(Decision(step, now, count, pick, ran, overtaken))
        return pick

    def put_back(self, handle: asyncio.Handle) -> None:
        """`handle`, taken but not run, is ready again, first."""
        self.lanes.appendleft(deque((handle,)))

    def heads(self) -> str:
        """The lane heads, named as in a chooser's `why`."""
        return ", ".join(describe(lane[0]) for lane in list(self.lanes)[:WHY_NAMED])

    def forced(self, step: int, handle: asyncio.Handle) -> ScheduleDivergence | None:
        """In replay, the error when `step`, one with the single option `handle`, is one
        the recording had a choice at."""
        if self.replay is not None and step == self.replay.next_step:
            return self.replay.forced(step, self._clock.now_us, describe(handle))
        return None

    def unfinished(self, steps: int) -> ScheduleDivergence | None:
        """In replay, the error when recorded choices are left after `steps` steps."""
        if self.replay is not None:
            return self.replay.unfinished(steps, self._clock.now_us)
        return None

    def stop_choosing(self) -> None:
        """FIFO from now on, no replay, nothing recorded."""
        self._chooser = FirstChooser()
        self.replay = None
        self.schedule = Schedule(legality=self._legality)
