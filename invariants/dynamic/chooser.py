"""A `Chooser` whose decisions come from a script the test framework drew.

The state machines draw each step's schedule as short lists of integers (so it appears
in the printed step program and shrinks toward 0, the FIFO choice): one for every
decision, and one spent only at timer ties (a `why` starting with `TIMER_TIE`), where the
same-instant races are; without it the first choices of a step (hubs starting, a burst of
posts) would use the script up before the instant that matters. Past the end of a script
every decision is the first alternative, so a run never needs more draws than the scripts
hold, and the same scripts always give the same schedule.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

from invariants.adapter import TIMER_TIE


class ScriptedChooser:
    def __init__(self) -> None:
        self._script: deque[int] = deque()
        self._ties: deque[int] = deque()
        self.decisions = 0  # every decision asked for, scripted or not

    def load(self, script: Iterable[int], ties: Iterable[int] = ()) -> None:
        """Replace what is left of the scripts (the next step's drawn schedule): `script`
        for every decision but the timer ties, `ties` for those."""
        self._script = deque(script)
        self._ties = deque(ties)

    def choose(self, options: int, why: str) -> int:
        self.decisions += 1
        script = self._ties if why.startswith(TIMER_TIE) else self._script
        if options <= 1 or not script:
            return 0
        return script.popleft() % options
