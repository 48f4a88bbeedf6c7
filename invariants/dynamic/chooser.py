"""A `Chooser` whose decisions come from a script the test framework drew.

The state machines draw each step's schedule as short lists of integers (so it appears
in the printed step program and shrinks toward 0, the FIFO choice): one for every
decision, and one for timer ties (a `why` starting with `TIMER_TIE`), where the
same-instant races are. The tie script starts afresh at each instant with a tie: a race
lives in one instant, so the script says how to order any tie instant's choices, and
neither the first choices of a step (hubs starting, a burst of posts) nor an earlier tie
instant uses it up. Past the end of a script every decision is the first alternative, so
a run never needs more draws than the scripts hold, and the same scripts always give the
same schedule.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

from invariants.adapter import TIMER_TIE


def tie_instant(why: str) -> str:
    """The instant a timer tie's `why` names: its text before the first comma (the virtual
    loop's read `timer tie at t=100 ms, step 3: ...`). Ties whose `why` names no instant
    count as one instant."""
    return why.partition(",")[0]


class ScriptedChooser:
    def __init__(self) -> None:
        self._script: deque[int] = deque()
        self._tie_script: tuple[int, ...] = ()
        self._ties: deque[int] = deque()
        self._tie_instant: str | None = None  # the instant the tie script is being spent at
        self.decisions = 0  # every decision asked for, scripted or not

    def load(self, script: Iterable[int], ties: Iterable[int] = ()) -> None:
        """Replace what is left of the scripts (the next step's drawn schedule): `script`
        for every decision but the timer ties, `ties` for those of each tie instant."""
        self._script = deque(script)
        self._tie_script = tuple(ties)
        self._tie_instant = None  # the next tie, at whatever instant, starts the script

    def choose(self, options: int, why: str) -> int:
        self.decisions += 1
        if why.startswith(TIMER_TIE):
            instant = tie_instant(why)
            if instant != self._tie_instant:
                self._tie_instant = instant
                self._ties = deque(self._tie_script)
            script = self._ties
        else:
            script = self._script
        if options <= 1 or not script:
            return 0
        return script.popleft() % options
