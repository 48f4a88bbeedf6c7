"""How far the loop runs: to a deadline, or until the awaited work is done."""

from __future__ import annotations

import asyncio
from typing import Any


class Drive:
    """The drive under way. With a deadline (`advance`, `run_until_idle`) it ends there,
    or sooner once idle if asked; without one (`run_until_complete`, `run_forever`) only
    the program ends it, so an idle loop is stuck."""

    def __init__(self) -> None:
        self.deadline_us: int | None = None
        self._until_idle = False
        self.reached = False
        self.idle = False
        # What `run_until_complete` waits on, innermost last: a stuck report names it.
        self.awaited: list[asyncio.Future[Any]] = []

    def run(self, loop: asyncio.AbstractEventLoop, deadline_us: int, *, until_idle: bool) -> bool:
        """Run `loop` to `deadline_us`; whether it went idle first (with `until_idle`)."""
        self.deadline_us, self._until_idle = deadline_us, until_idle
        self.reached = self.idle = False
        try:
            while not self.reached:  # a callback's loop.stop() ends one run_forever only
                loop.run_forever()
        finally:
            self.deadline_us, self._until_idle = None, False
        return self.idle

    def wakes(self, due_us: int) -> bool:
        """Whether an idle loop moves on to the timer due at `due_us`."""
        return self.deadline_us is None or due_us <= self.deadline_us

    def end(self, due_us: int | None, now_us: int) -> int:
        """Nothing is ready before the deadline: the drive ends, idle if it runs until idle
        and no timer is armed (the clock stays), else at the deadline. When it ends."""
        assert self.deadline_us is not None
        self.reached = True
        if self._until_idle and due_us is None:
            self.idle = True
            return now_us
        return max(now_us, self.deadline_us)
