"""A `Chooser` whose decisions come from what the test framework drew.

A run's ordering decisions follow one of three schedule strategies, drawn per example in
`init` (`schedule`), so the portfolio is part of Hypothesis's choice sequence and shrinks
toward the first, whose empty scripts are FIFO:

- **scripts** (`("scripts",)`): the state machines draw each step's schedule as short
  lists of integers (so it appears in the printed step program and shrinks toward 0, the
  FIFO choice): one for every decision, and one for timer ties (a `why` starting with
  `TIMER_TIE`), where the same-instant races are. The tie script starts afresh at each
  instant with a tie: a race lives in one instant, so the script says how to order any tie
  instant's choices, and neither the first choices of a step (hubs starting, a burst of
  posts) nor an earlier tie instant uses it up. Past the end of a script every decision is
  the first alternative, so the same scripts always give the same schedule.
- **change points** (`("pct", ((k, a), ...))`, one to three): FIFO at every ordering
  decision of the run except the k-th (counted from 0 over the whole run), which takes
  its alternative a. A bug of depth d (d orderings that must go one way) needs d such
  points, wherever in the run they fall: the schedules of PCT's randomized scheduler
  (Burckhardt et al., ASPLOS 2010), as bounded deviations from the loop's own order.
- **uniform** (`("uniform", seed)`): every ordering decision a choice among its options
  with equal chances, from a generator seeded by the drawn number.

The simulated network's verdicts (a `why` starting with `NETWORK_VERDICT`) are faults of
the network, not orders: the step scripts answer them under every strategy.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Iterable, Sequence

from invariants.adapter import NETWORK_VERDICT, TIMER_TIE

# The strategies' names, as `init`'s `schedule` spells them.
SCRIPTS, CHANGE_POINTS, UNIFORM = "scripts", "pct", "uniform"
Strategy = tuple[object, ...]


def tie_instant(why: str) -> str:
    """The instant a timer tie's `why` names: its text before the first comma (the virtual
    loop's read `timer tie at t=100 ms, step 3: ...`). Ties whose `why` names no instant
    count as one instant."""
    return why.partition(",")[0]


def strategy_problem(strategy: Strategy) -> str | None:
    """What is wrong with `strategy` as `init`'s `schedule`, or None."""
    if strategy == (SCRIPTS,):
        return None
    if len(strategy) == 2 and strategy[0] == UNIFORM and isinstance(strategy[1], int):
        return None
    if len(strategy) == 2 and strategy[0] == CHANGE_POINTS and isinstance(strategy[1], tuple) \
            and all(isinstance(point, tuple) and len(point) == 2
                    and all(isinstance(n, int) and n >= 0 for n in point)
                    for point in strategy[1]):
        return None
    return (f"schedule must be ('{SCRIPTS}',), ('{CHANGE_POINTS}', ((k, a), ...)) or "
            f"('{UNIFORM}', seed), got {strategy!r}")


class ScriptedChooser:
    def __init__(self) -> None:
        self._script: deque[int] = deque()
        self._tie_script: tuple[int, ...] = ()
        self._ties: deque[int] = deque()
        self._tie_instant: str | None = None  # the instant the tie script is being spent at
        self.decisions = 0  # every decision asked for, scripted or not
        self._orders = 0  # the ordering decisions asked for under a run-wide strategy
        self._points: dict[int, int] | None = None  # change points: decision -> alternative
        self._uniform: random.Random | None = None

    def use(self, strategy: Sequence[object]) -> None:
        """The run's schedule strategy (module docstring); `ValueError` if it is none."""
        strategy = tuple(strategy)
        problem = strategy_problem(strategy)
        if problem is not None:
            raise ValueError(problem)
        self._points = self._uniform = None
        if strategy[0] == CHANGE_POINTS:
            points = strategy[1]
            assert isinstance(points, tuple)
            self._points = {at: alternative for at, alternative in points}
        elif strategy[0] == UNIFORM:
            seed = strategy[1]
            assert isinstance(seed, int)
            self._uniform = random.Random(seed)

    def load(self, script: Iterable[int], ties: Iterable[int] = ()) -> None:
        """Replace what is left of the scripts (the next step's drawn schedule): `script`
        for every decision but the timer ties, `ties` for those of each tie instant."""
        self._script = deque(script)
        self._tie_script = tuple(ties)
        self._tie_instant = None  # the next tie, at whatever instant, starts the script

    def choose(self, options: int, why: str) -> int:
        self.decisions += 1
        run_wide = self._points is not None or self._uniform is not None
        if run_wide and not why.startswith(NETWORK_VERDICT):
            return self._run_wide(options)
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

    def _run_wide(self, options: int) -> int:
        order = self._orders
        self._orders += 1
        if options <= 1:
            return 0
        if self._uniform is not None:
            return self._uniform.randrange(options)
        assert self._points is not None
        alternative = self._points.get(order, 0)
        # A change point always deviates: its alternative among the options but FIFO's.
        return 1 + (alternative - 1) % (options - 1) if alternative else 0
