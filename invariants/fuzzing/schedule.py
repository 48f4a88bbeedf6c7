"""The harness's schedule across a session's tests: which worker fuzzes which tests, and
for how long at a time.

HypoFuzz alone hands worker i the tests from the i-th on and lets each worker pick a test
for 100 examples at a time, so in a short session each worker fuzzes one test and the
others get nothing. Here every test gets its fair share of every session:

- `assign`: with no more workers than tests, the tests are dealt round-robin (worker i
  gets tests i, i+K, i+2K, ...); with more workers than tests, every worker gets one test
  and the extra workers double up on the tests in turn, so every worker is used.
- `slice_seconds`: each worker rotates through its tests in time slices short enough that
  each of them gets at least `ROUNDS` turns in the time box (after start-up).
- `Rotation`: the rotation itself, on a clock it is given (virtual in the tests).

Nothing here imports HypoFuzz: `sliced_worker` applies it to HypoFuzz's workers.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")

# How the session tells its workers the slice (read by `sliced_worker`).
ENV_SLICE_SECONDS = "HARNESS_FUZZ_SLICE_SECONDS"
ROUNDS = 2  # turns each test of a worker gets at least, in the time box
MIN_SLICE_SECONDS = 1.0  # switching tests costs little, but not nothing
MAX_SLICE_SECONDS = 60.0  # a long session still visits every test every few minutes


def assign(tests: Sequence[T], workers: int) -> list[list[T]]:
    """The tests each of `workers` workers fuzzes; every test goes to at least one."""
    if workers < 1 or not tests:
        raise ValueError("a schedule needs a worker and a test")
    if workers <= len(tests):
        return [list(tests[i::workers]) for i in range(workers)]
    return [[tests[i % len(tests)]] for i in range(workers)]


def tests_per_worker(tests: int, workers: int) -> int:
    """The most tests any one worker rotates through."""
    return max(1, math.ceil(tests / workers))


def slice_seconds(box_seconds: float, tests: int, workers: int) -> float:
    """How long a worker fuzzes one test before it moves to its next one."""
    share = box_seconds / (tests_per_worker(tests, workers) * ROUNDS)  # start-up is not in it
    return min(MAX_SLICE_SECONDS, max(MIN_SLICE_SECONDS, share))


def share_seconds(box_seconds: float, tests: int, workers: int) -> float:
    """Worker-seconds of the time box that fall to each test on average (the box's clock
    starts after start-up)."""
    return box_seconds * workers / tests if tests else 0.0


@dataclass
class Rotation:
    """A worker's turn order: its tests in a fixed order, one slice each, skipping those
    that can no longer be fuzzed (failed), at least one example per slice."""

    slice_seconds: float
    clock: Callable[[], float] = time.perf_counter
    last: int = -1  # position in the worker's order of the test that had the last turn

    def pick(self, order: Sequence[T], valid: Callable[[T], bool]) -> T | None:
        """The next valid test after the last one in `order` (a dropped test does not
        shift the others' turns)."""
        for step in range(1, len(order) + 1):
            position = (self.last + step) % len(order)
            if valid(order[position]):
                self.last = position
                return order[position]
        return None

    def run_slice(self, run_one: Callable[[], None], done: Callable[[], bool]) -> int:
        """Run examples until the slice is over or `done()`; returns how many ran."""
        end = self.clock() + self.slice_seconds
        count = 0
        while not done():
            run_one()
            count += 1
            if self.clock() >= end:
                break
        return count
