"""Legality: the default schedules are what CPython's loop can run, and nothing else.

asyncio's ready queue is FIFO, so two callbacks already queued never swap: the only
choices are where work from outside the queue lands (a due timer, a call from outside).
A program with no timers and no calls from outside has one schedule, the stock loop's,
whatever the chooser says: checked here against `asyncio.run`, seed by seed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import pytest
from aio_programs import LastChooser, ping_pong

from invariants.adapter import Chooser, SeededChooser
from invariants.aio import Legality, run


async def three_lanes(log: list[str]) -> None:
    """Three steps each schedule four callbacks at once (three lanes of four), plus a task
    yielding in between: within a lane asyncio promises call order."""
    loop = asyncio.get_running_loop()
    done = loop.create_future()
    left = [12]

    def note(lane: str, i: int) -> None:
        log.append(f"{lane}{i}")
        left[0] -= 1
        if left[0] == 0:
            done.set_result(None)

    def schedule(lane: str) -> None:
        for i in range(4):
            loop.call_soon(note, lane, i)

    async def yielder() -> None:
        for _ in range(6):
            log.append("y")
            await asyncio.sleep(0)

    for lane in "pqr":
        loop.call_soon(schedule, lane)  # one lane of three: p, q, r schedule in order
    task = asyncio.create_task(yielder())
    await done
    await task


def _lane_order_kept(log: list[str]) -> bool:
    for lane in "pqr":
        seen = [int(entry[1]) for entry in log if entry[0] == lane]
        if seen != sorted(seen):
            return False
    return True


def _interleaved(log: list[str]) -> bool:
    lanes = [entry[0] for entry in log if entry != "y"]
    return lanes != sorted(lanes)


async def yield_then_create(log: list[str]) -> None:
    """Task `a` yields with sleep(0); task `b` is created right after: on the stock loop
    `a`'s wake-up and `b`'s first step sit in one FIFO queue, `a`'s first."""
    async def a() -> None:
        log.append("a starts")
        await asyncio.sleep(0)
        log.append("a wakes")

    async def b() -> None:
        log.append("b starts")

    task_a = asyncio.create_task(a())
    await asyncio.sleep(0)
    task_b = asyncio.create_task(b())
    await asyncio.gather(task_a, task_b)


async def primitives(log: list[str]) -> None:
    """Everyday synchronisation, no timers: a task group, a queue, an event, a condition,
    a lock and a semaphore passed between tasks."""
    queue: asyncio.Queue[int] = asyncio.Queue(maxsize=2)
    event, condition = asyncio.Event(), asyncio.Condition()
    lock, semaphore = asyncio.Lock(), asyncio.Semaphore(2)

    async def producer() -> None:
        for i in range(6):
            await queue.put(i)
            log.append(f"put {i}")
        event.set()

    async def consumer(name: str) -> None:
        while not (event.is_set() and queue.empty()):
            try:
                item = queue.get_nowait()
            except asyncio.QueueEmpty:
                await asyncio.sleep(0)
                continue
            async with semaphore, lock:
                log.append(f"{name} got {item}")
            async with condition:
                condition.notify_all()

    async def watcher() -> None:
        async with condition:
            await condition.wait_for(event.is_set)
        log.append("watcher saw the end")

    async with asyncio.TaskGroup() as group:
        group.create_task(watcher())
        group.create_task(producer())
        for name in ("c1", "c2"):
            group.create_task(consumer(name))


Program = Callable[[list[str]], Coroutine[Any, Any, None]]
NO_OUTSIDE_WORK: dict[str, Program] = {
    "three_lanes": three_lanes,
    "ping_pong": ping_pong,
    "yield_then_create": yield_then_create,
    "primitives": primitives,
}


@pytest.mark.parametrize("name", sorted(NO_OUTSIDE_WORK))
def test_without_outside_work_every_chooser_runs_the_stock_schedule(name: str) -> None:
    program = NO_OUTSIDE_WORK[name]
    stock: list[str] = []
    asyncio.run(program(stock))
    choosers: list[Chooser] = [LastChooser(), *(SeededChooser(seed) for seed in range(20))]
    for chooser in choosers:
        log: list[str] = []
        result = run(program(log), chooser=chooser)
        assert log == stock, chooser
        assert result.schedule.decisions == []


def test_negative_control_reorder_all_leaves_the_stock_schedule() -> None:
    stock: list[str] = []
    asyncio.run(yield_then_create(stock))
    assert stock.index("a wakes") < stock.index("b starts")
    others = []
    for seed in range(20):
        log: list[str] = []
        run(yield_then_create(log), chooser=SeededChooser(seed), legality=Legality.REORDER_ALL)
        others.append(log)
    assert any(log != stock for log in others)


def test_reorder_all_breaks_the_lane_order() -> None:
    broken = 0
    for seed in range(60):
        log: list[str] = []
        run(three_lanes(log), chooser=SeededChooser(seed), legality=Legality.REORDER_ALL)
        assert sorted(log) == sorted(
            [f"{lane}{i}" for lane in "pqr" for i in range(4)] + ["y"] * 6
        )
        broken += not _lane_order_kept(log)
    assert broken > 10
