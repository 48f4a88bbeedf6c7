"""The ready order: asyncio's one FIFO ready queue, and where work from outside lands in it.

A stock event loop runs its ready callbacks strictly FIFO, in iterations: each iteration
first appends every timer that has fallen due, then runs the callbacks that were ready as
it began; what they schedule waits for the next iteration. Nothing inside the loop can
swap two callbacks already queued. Only the world outside decides anything: when a timer
falls due relative to the work queued before it (how long that work took), and when a
call from outside the loop arrives (the harness's post, I/O).

So the virtual loop keeps the one FIFO queue and the iterations, and its choices are
**arrivals**: a due timer, or a batch of callbacks scheduled from outside the loop, lands
at the start of an iteration (appended to the queue), either now or held back behind the
work queued now, to land at a later iteration of the same instant. Option 0 lands it: a run
whose every choice is 0 is the stock loop's order. Real timing bounds the holds: timers
armed at one instant fall due in the order they were armed (one chain: a later one never
lands while an earlier one is held), a timer due at the instant it was armed (a zero
delay) lands at the next iteration as on the stock loop, and nothing is held past its
instant (the clock moves only once every arrival has landed).

A timer may carry a **verdict** (`Verdict`: the simulated network's delivery of a segment,
`invariants.aio.net`): as it falls due, before it lands, the chooser picks among its
outcomes (option 0 lands it as armed: the healthy network), and it lands only if the
outcome says so (a segment held or dropped does not).

Under `Legality.REORDER_ALL` every arrival lands at once and any queued callback may run
next: it finds more, but may report what production cannot run.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import deque
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Protocol

from invariants.adapter import (
    NETWORK_VERDICT,
    TIMER_TIE,
    Chooser,
    FirstChooser,
    SeededChooser,
)
from invariants.aio.clock import Clock
from invariants.aio.errors import ScheduleDivergence
from invariants.aio.labels import describe
from invariants.aio.replay import NEVER, Replay
from invariants.aio.schedule import (
    HELD,
    OVERTAKEN_NAMED,
    VERDICT,
    Decision,
    Legality,
    Schedule,
    format_time,
)

# How many options (or queued callbacks) a chooser's `why` names (the count is always given).
WHY_NAMED = 8
# The choosers known to pick without reading `why` (these classes exactly, not a subclass
# that may read it): they are handed "" instead of a text formatted for every decision
# (one per segment on a simulated network).
_WHY_UNREAD = (FirstChooser, SeededChooser)

Lane = deque[asyncio.Handle]


class Verdict(Protocol):
    """What becomes of a timer as it falls due: `options()` names the outcomes (option 0:
    it lands as armed); with more than one the chooser picks, recorded as any choice.
    `apply(pick)` carries the pick out and says whether the timer lands now."""

    def options(self) -> Sequence[str]: ...

    def apply(self, pick: int) -> bool: ...


class JudgedTimer(asyncio.TimerHandle):
    """A timer that lands as its `verdict` decides (`VirtualLoop.call_judged`). The verdict
    rides on the timer, not in a table keyed by it: a TimerHandle hashes in Python."""

    __slots__ = ("verdict",)
    verdict: Verdict


@dataclass(slots=True)
class Arrival:
    """Callbacks from outside the FIFO chain, landing together: a due timer, or a batch
    scheduled from outside the loop. Arrivals of one `chain` land in order."""

    handles: Lane
    chain: Hashable
    forced: bool = False  # lands at the next iteration, as on every stock run


class ReadyOrder:
    """The FIFO queue, the arrivals not landed yet, and the choices between them."""

    def __init__(
        self, clock: Clock, chooser: Chooser, legality: Legality, replay: Schedule | None,
    ) -> None:
        self.fifo: Lane = deque()
        self.pending: list[Arrival] = []
        self.todo = 0  # callbacks left to run in this iteration
        self.judging = False  # a `JudgedTimer` was armed: due timers are looked at
        self._outside = itertools.count()
        self._clock = clock
        self._chooser = chooser
        self._why_read = type(chooser) not in _WHY_UNREAD
        self._legality = legality
        self.reorder_all = legality is Legality.REORDER_ALL
        self.replay = Replay(replay) if replay is not None else None
        self.schedule = Schedule(legality=legality)
        # Network verdicts that were not the nominal delivery (a segment held, a datagram
        # lost): the harness's own doing, which a checker may need to know of.
        self.verdicts_held = 0

    @property
    def replay_at(self) -> int:
        """The step of the replay's next recorded choice (NEVER when not replaying)."""
        return self.replay.next_step if self.replay is not None else NEVER

    def outside(self, handles: Lane) -> None:
        """`handles`, scheduled from outside the loop, arrive: independent of every other
        arrival."""
        self.pending.append(Arrival(handles, ("outside", next(self._outside))))

    def begin_iteration(self, step: int) -> None:
        """An iteration begins before `step`: due timers arrive, arrivals land or are
        held, and the callbacks queued now are the iteration's."""
        clock, fifo, pending = self._clock, self.fifo, self.pending
        if clock.timers and clock.timers[0][0] <= clock.now_us:
            due = clock.release_due()
            if self.judging:
                due = self._judge(step, due)
            if len(due) == 1 and not pending and not fifo:  # one timer alone: no choice
                fifo.append(due[0][0])
                self.todo = 1
                return
            clock.note_ties(due)
            now = clock.now_us
            pending.extend(Arrival(deque((timer,)), ("timer", armed), armed == now)
                           for timer, armed in due)
        if len(pending) == 1 and not fifo:  # one arrival alone: no choice
            fifo.extend(pending.pop().handles)
        elif pending:
            self._land(step)
        self.todo = len(fifo)

    def _judge(
        self, step: int, due: list[tuple[asyncio.TimerHandle, int]],
    ) -> list[tuple[asyncio.TimerHandle, int]]:
        """The due timers that land: each one with a verdict as its verdict decides."""
        landing = []
        for timer, armed in due:
            if timer.__class__ is JudgedTimer:
                verdict = timer.verdict
                options = verdict.options()
                pick = self._decide_verdict(step, options) if len(options) > 1 else 0
                if not verdict.apply(pick):
                    continue
            landing.append((timer, armed))
        return landing

    def _decide_verdict(self, step: int, options: Sequence[str]) -> int:
        """The verdict among `options` (more than one) on a timer falling due: `_ask`
        spelt out for the one case, without its callbacks (a network judges every packet)."""
        now = self._clock.now_us
        count = len(options)
        replay = self.replay
        recorded: Decision | None = None
        if replay is not None:
            recorded = replay.decide(step, now, count)
            pick = recorded.chosen
        else:
            pick = self._choose(count, (
                f"{NETWORK_VERDICT} at t={format_time(now)}, step {step}: "
                f"{'; or '.join(options)}"
                if self._why_read else ""))
        ran = VERDICT + options[pick]
        if replay is not None and recorded is not None:
            replay.confirm(recorded, step, now, ran, ())
        self.schedule.decisions.append(Decision(step, now, count, pick, ran))
        if pick:
            self.verdicts_held += 1
        return pick

    def _ask(
        self, step: int, options: int, why: Callable[[], str],
        recorded_as: Callable[[int], tuple[str, tuple[str, ...]]],
    ) -> int:
        """One choice among `options`: the replay's recorded one, else the chooser's
        (asked with `why`); recorded with what it ran and what it overtook
        (`recorded_as(pick)`), and in replay checked to be the recording's."""
        now = self._clock.now_us
        replay = self.replay
        recorded: Decision | None = None
        if replay is not None:
            recorded = replay.decide(step, now, options)
            pick = recorded.chosen
        else:
            pick = self._choose(options, why() if self._why_read else "")
        ran, overtaken = recorded_as(pick)
        if replay is not None and recorded is not None:
            replay.confirm(recorded, step, now, ran, overtaken)
        self.schedule.decisions.append(Decision(step, now, options, pick, ran, overtaken))
        return pick

    def _choose(self, options: int, why: str) -> int:
        """The chooser's pick among `options`, checked to be one."""
        pick = self._chooser.choose(options, why)
        if not (isinstance(pick, int) and 0 <= pick < options):
            raise ValueError(f"chooser picked {pick!r} of {options} options (0..{options - 1})")
        return pick

    def _land(self, step: int) -> None:
        """Land the arrivals: which comes next among the first of each chain (option 0,
        the oldest: the stock order), until all have landed or the rest is held."""
        chains: dict[Hashable, deque[Arrival]] = {}
        for arrival in self.pending:
            if not _cancelled(arrival):
                chains.setdefault(arrival.chain, deque()).append(arrival)
        self.pending = []
        fifo, landed = self.fifo, False
        while chains:
            forced = any(chain[0].forced for chain in chains.values())
            can_hold = not forced and (landed or bool(fifo))
            count = len(chains)
            pick = 0
            if count > 1 or can_hold:
                pick = self._decide(step, chains, can_hold)
            if pick == count:  # hold the rest: it lands at a later iteration
                self.pending = [arrival for chain in chains.values() for arrival in chain]
                return
            key = next(itertools.islice(chains, pick, None)) if pick else next(iter(chains))
            chain = chains[key]
            fifo.extend(chain.popleft().handles)
            if not chain:
                del chains[key]
            landed = True

    def _decide(
        self, step: int, chains: dict[Hashable, deque[Arrival]], can_hold: bool,
    ) -> int:
        """Which chain's first arrival lands next (0: the oldest), or, as the last option
        where `can_hold`, none: the rest waits behind the queued work."""
        count = len(chains)
        now = self._clock.now_us

        def heads(first: int, stop: int) -> list[str]:
            # Named only as asked (a chooser that reads no `why` asks for the pick alone):
            # naming a callback reads its task, for every choice of a flood.
            return [describe(chain[0].handles[0])
                    for chain in itertools.islice(chains.values(), first, stop)]

        def why() -> str:
            kind = TIMER_TIE if self._clock.tie else "aio ready order"
            more = f" and {count - WHY_NAMED} more" if count > WHY_NAMED else ""
            hold = (
                f"; or hold them behind {len(self.fifo)} queued: "
                f"{', '.join(self._named(self.fifo, WHY_NAMED))}" if can_hold else ""
            )
            return (f"{kind} at t={format_time(now)}, step {step}: which lands next: "
                    f"{', '.join(heads(0, WHY_NAMED))}{more}{hold}")

        def recorded_as(pick: int) -> tuple[str, tuple[str, ...]]:
            if pick == count:
                return (HELD + ", ".join(heads(0, OVERTAKEN_NAMED)),
                        self._named(self.fifo, OVERTAKEN_NAMED))
            (ran,) = heads(pick, pick + 1)
            return ran, tuple(heads(0, min(pick, OVERTAKEN_NAMED)))

        return self._ask(step, count + can_hold, why, recorded_as)

    @staticmethod
    def _named(lane: Lane, count: int) -> tuple[str, ...]:
        return tuple(describe(handle) for handle in itertools.islice(lane, count))

    def next_handle(self, step: int) -> asyncio.Handle:
        """The callback to run at `step`, taken off the queue (which is not empty)."""
        self.todo -= 1
        if self.reorder_all and len(self.fifo) > 1:
            return self._choose_any(step)
        return self.fifo.popleft()

    def _choose_any(self, step: int) -> asyncio.Handle:
        fifo = self.fifo
        live = [handle for handle in fifo if not handle._cancelled]
        if len(live) <= 1:
            return fifo.popleft()
        pick = self._decide_any(step, len(live), live.__getitem__)
        handle = live[pick]
        fifo.remove(handle)
        return handle

    def _decide_any(
        self, step: int, count: int, option: Callable[[int], asyncio.Handle],
    ) -> int:
        now = self._clock.now_us

        def why() -> str:
            named = ", ".join(describe(option(i)) for i in range(min(count, WHY_NAMED)))
            more = f" and {count - WHY_NAMED} more" if count > WHY_NAMED else ""
            kind = TIMER_TIE if self._clock.tie else "aio ready order"
            return f"{kind} at t={format_time(now)}, step {step}: {named}{more}"

        return self._ask(step, count, why, lambda pick: (
            describe(option(pick)),
            tuple(describe(option(i)) for i in range(min(pick, OVERTAKEN_NAMED)))))

    def put_back(self, handle: asyncio.Handle) -> None:
        """`handle`, taken but not run, is ready again, first."""
        self.fifo.appendleft(handle)
        self.todo += 1

    def heads(self) -> str:
        """The first queued callbacks, named as in a chooser's `why`."""
        return ", ".join(self._named(self.fifo, WHY_NAMED))

    def forced(self, step: int, handle: asyncio.Handle) -> ScheduleDivergence | None:
        """In replay, the error when `step`, one with no choice, is one the recording had
        a choice at."""
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
        self._why_read = False
        self.replay = None
        self.schedule = Schedule(legality=self._legality)

    def clear(self) -> None:
        self.fifo.clear()
        self.pending.clear()
        self.todo = 0


def _cancelled(arrival: Arrival) -> bool:
    """A timer cancelled before it landed (a batch from outside lands whatever it holds:
    its cancelled callbacks are skipped as they come up)."""
    handles = arrival.handles
    return len(handles) == 1 and handles[0]._cancelled
