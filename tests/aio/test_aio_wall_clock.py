"""Under the harness the mesh's wall-clock reads are the loop's virtual clock, so a rate
limiter and a deadline loop behave as in production (each beside the same program on the
stock `asyncio.run`), while the standard library, the harness and Hypothesis keep real
time. A clock captured where the loop cannot see it stays real: the negative control."""

from __future__ import annotations

import asyncio
import datetime
import sys
import time
import types
from collections.abc import Callable
from datetime import date
from datetime import datetime as Datetime
from time import monotonic

from invariants.aio import run
from invariants.aio.wallclock import WALL_EPOCH

Clock = Callable[[], float]


class TokenBucket:
    """One token a `period`, holding at most one; reads `clock` when it takes."""

    def __init__(self, period: float, clock: Clock | None = None) -> None:
        self.period = period
        self.clock = clock
        self.tokens = 1.0
        self.last = self.now()

    def now(self) -> float:
        # Resolved when called, as production code reads the clock.
        return self.clock() if self.clock is not None else time.monotonic()

    def take(self) -> bool:
        now = self.now()
        self.tokens = min(1.0, self.tokens + (now - self.last) / self.period)
        self.last = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False


async def send_five(period: float, pause: float, clock: Clock | None = None) -> int:
    bucket = TokenBucket(period, clock)
    sent = 0
    for _ in range(5):
        sent += bucket.take()
        await asyncio.sleep(pause)
    return sent


def test_a_token_bucket_sends_as_on_the_stock_loop() -> None:
    assert asyncio.run(send_five(0.02, 0.03)) == 5  # control: real time refills it
    result = run(send_five(0.02, 0.03))
    assert (result.result, result.now_us) == (5, 150_000)


def test_negative_control_a_clock_captured_before_the_loop_stays_real() -> None:
    # A default argument bound at import is out of the loop's reach: the bucket reads real
    # time, which barely moves while virtual time runs 4 s, and it sends one message.
    real_clock: Clock = _captured_monotonic()
    assert run(send_five(1.0, 1.0, real_clock)).result == 1


def _captured_monotonic(clock: Clock = time.monotonic) -> Clock:
    return clock


async def poll_until(timeout: float, clock: Clock | None = None) -> int:
    read = clock if clock is not None else monotonic  # bound at import, in this module
    deadline = read() + timeout
    polls = 0
    while read() < deadline and polls < 1000:
        polls += 1
        await asyncio.sleep(0.01)
    return polls


def test_a_poll_loop_ends_at_its_deadline_as_on_the_stock_loop() -> None:
    started = time.monotonic()
    polls = asyncio.run(poll_until(0.05))
    assert time.monotonic() - started >= 0.05 and 1 <= polls <= 5  # control
    result = run(poll_until(0.05))
    assert (result.result, result.now_us) == (5, 50_000)  # at the deadline, exactly


def test_negative_control_a_poll_loop_on_a_captured_clock_never_ends() -> None:
    # On the virtual clock a 5 s deadline ends after 500 polls; on a real clock captured
    # out of the loop's reach, 1000 polls (10 virtual seconds, a fraction of a real one)
    # run until the program's guard stops them.
    assert run(poll_until(5.0)).result == 500
    result = run(poll_until(5.0, _captured_monotonic()))
    assert (result.result, result.now_us) == (1000, 10_000_000)


async def reads() -> list[object]:
    await asyncio.sleep(1.5)
    return [
        time.monotonic(), time.monotonic_ns(), time.perf_counter(), time.perf_counter_ns(),
        time.time(), time.time_ns(), monotonic(),
        Datetime.now(datetime.UTC), datetime.datetime.now(datetime.UTC), Datetime.utcnow(),
        datetime.datetime.today() - Datetime.now(), date.today(),
        isinstance(Datetime(2020, 1, 1), Datetime), type(Datetime(2020, 1, 1)),
    ]


def test_every_read_is_the_virtual_clock_and_the_same_in_every_run() -> None:
    first, second = run(reads()).result, run(reads()).result
    assert first == second
    at = Datetime.fromtimestamp(WALL_EPOCH + 1.5, datetime.UTC)
    assert first == [
        1.5, 1_500_000_000, 1.5, 1_500_000_000,
        WALL_EPOCH + 1.5, (WALL_EPOCH * 1_000_000 + 1_500_000) * 1000, 1.5,
        at, at, at.replace(tzinfo=None),
        datetime.timedelta(0), Datetime.fromtimestamp(WALL_EPOCH + 1.5).date(),
        True, datetime.datetime,
    ]
    # Outside the loop the same names read real time again.
    assert time.time() > WALL_EPOCH + 3600 * 24 * 365
    assert Datetime.now().year >= 2025 and Datetime is datetime.datetime


def test_a_name_bound_before_the_loop_ran_is_read_virtual_too() -> None:
    module = types.ModuleType("late_mesh")
    exec("from time import perf_counter\nfrom datetime import datetime", module.__dict__)
    sys.modules["late_mesh"] = module
    try:
        async def main() -> tuple[float, int]:
            await asyncio.sleep(2)
            return module.perf_counter(), module.datetime.now(datetime.UTC).second

        assert run(main()).result == (2.0, 2)
    finally:
        del sys.modules["late_mesh"]
    assert module.perf_counter is time.perf_counter  # put back once the loop stops


def test_the_harness_the_standard_library_and_hypothesis_keep_real_time() -> None:
    source = "value = time.perf_counter(), time.monotonic(), time.time()"

    async def main() -> dict[str, tuple[float, float, float]]:
        await asyncio.sleep(1)
        seen = {}
        for name in ("invariants.aio.kit", "hypothesis.core", "logging", "tests.mesh"):
            namespace: dict[str, object] = {"__name__": name, "time": time}
            exec(source, namespace)
            seen[name] = namespace["value"]  # type: ignore[assignment]
        return seen

    before = time.perf_counter(), time.monotonic(), time.time()
    seen = run(main()).result
    after = time.perf_counter(), time.monotonic(), time.time()
    for name in ("invariants.aio.kit", "hypothesis.core", "logging"):
        assert all(b <= v <= a for b, v, a in zip(before, seen[name], after, strict=True))
    assert seen["tests.mesh"] == (1.0, 1.0, WALL_EPOCH + 1.0)  # control: the mesh's read
