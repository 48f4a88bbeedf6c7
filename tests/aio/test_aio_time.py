"""Virtual time: it jumps to the earliest live timer, only when nothing is ready."""

from __future__ import annotations

import asyncio

from invariants.aio import VirtualLoop, run


def test_an_hour_of_sleep_is_a_jump() -> None:
    async def main() -> float:
        await asyncio.sleep(3600)
        return asyncio.get_running_loop().time()

    result = run(main())
    assert result.result == 3600.0
    assert result.now_us == 3_600_000_000
    assert result.steps < 10


def test_time_does_not_move_while_anything_is_ready() -> None:
    async def main() -> list[float]:
        loop = asyncio.get_running_loop()
        seen = []
        for _ in range(100):
            await asyncio.sleep(0)
            seen.append(loop.time())
        return seen

    assert set(run(main()).result) == {0.0}


def test_microseconds_are_exact() -> None:
    async def main() -> None:
        for _ in range(1000):
            await asyncio.sleep(0.0001)  # floats that do not add up exactly

    result = run(main())
    assert result.now_us == 100_000  # 1000 × 100 µs, no drift


def test_a_cancelled_timer_does_not_move_time() -> None:
    loop = VirtualLoop()
    far = loop.call_later(100.0, lambda: None)
    far.cancel()
    loop.call_later(1.0, lambda: None)
    assert loop.run_until_idle(200_000) is True
    assert loop.now_us == 1_000_000
    # Negative control: the same timer left armed is where time goes.
    loop = VirtualLoop()
    loop.call_later(100.0, lambda: None)
    loop.call_later(1.0, lambda: None)
    assert loop.run_until_idle(200_000) is True
    assert loop.now_us == 100_000_000


def test_a_cancelled_head_is_dropped_before_the_jump() -> None:
    async def main() -> float:
        loop = asyncio.get_running_loop()
        early = loop.call_later(0.5, lambda: None)
        early.cancel()
        await asyncio.sleep(2)
        return loop.time()

    assert run(main()).result == 2.0


def test_advance_runs_what_is_due_and_moves_exactly() -> None:
    loop = VirtualLoop()
    fired: list[int] = []
    loop.call_later(0.010, lambda: fired.append(loop.now_ms))
    loop.call_later(0.020, lambda: fired.append(loop.now_ms))
    loop.advance(10)
    assert (fired, loop.now_ms) == ([10], 10)  # the deadline itself is inside
    loop.advance(5)
    assert (fired, loop.now_ms) == ([10], 15)
    loop.advance(0)
    assert loop.now_ms == 15
    loop.advance(100)
    assert (fired, loop.now_ms) == ([10, 20], 115)


def test_run_until_idle_stops_at_the_limit_with_work_left() -> None:
    loop = VirtualLoop()
    loop.call_later(5.0, lambda: None)
    assert loop.run_until_idle(1000) is False
    assert loop.now_ms == 1000
    assert loop.run_until_idle(10_000) is True
    assert loop.now_ms == 5000  # stays at the last step, not the limit


def test_pending_tasks_waiting_on_nothing_are_idle() -> None:
    loop = VirtualLoop()

    async def pump(queue: asyncio.Queue[int]) -> None:
        while True:
            await queue.get()

    queue: asyncio.Queue[int] = asyncio.Queue()
    loop.create_task(pump(queue))
    assert loop.run_until_idle(1000) is True
    assert loop.now_ms == 0


def test_an_infinite_sleep_never_fires() -> None:
    loop = VirtualLoop()
    handle = loop.call_later(float("inf"), lambda: None)
    assert loop.run_until_idle(1000) is True
    handle.cancel()


def test_a_deadline_in_float_seconds_is_reached_not_spun_on() -> None:
    """Everyday code waits out a deadline as `left = deadline - loop.time()`; the float
    residue left at the deadline (about 1e-15 s) is a positive delay, and a positive delay
    moves time (one microsecond at least), as a real clock would go on ticking. The
    control: a delay of 0 stays in its instant."""

    async def main() -> tuple[int, float]:
        loop = asyncio.get_running_loop()
        await asyncio.sleep(30.001)
        deadline = loop.time() + 10.0  # 40.001000000000005: a residue above 40.001
        waits = 0
        while (left := deadline - loop.time()) > 0:
            waits += 1
            await asyncio.sleep(left)
        return waits, loop.time()

    result = run(main())
    waits, now = result.result
    assert waits == 2 and now == 40.001001  # the residue cost one microsecond, not a spin
    assert result.steps < 20

    async def zero() -> float:
        await asyncio.sleep(0)
        return asyncio.get_running_loop().time()

    assert run(zero()).result == 0.0
