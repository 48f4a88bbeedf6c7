"""A `Chooser` whose decisions come from a script the test framework drew.

The state machines draw each step's schedule as a short list of integers (so it appears
in the printed step program and shrinks toward 0, the FIFO choice). Past the end of the
script every decision is the first alternative, so a run never needs more draws than the
script holds, and the same script always gives the same schedule.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable


class ScriptedChooser:
    def __init__(self) -> None:
        self._script: deque[int] = deque()
        self.decisions = 0  # every decision asked for, scripted or not

    def load(self, script: Iterable[int]) -> None:
        """Replace what is left of the script (the next step's drawn schedule)."""
        self._script = deque(script)

    def choose(self, options: int, why: str) -> int:
        self.decisions += 1
        if options <= 1 or not self._script:
            return 0
        return self._script.popleft() % options
