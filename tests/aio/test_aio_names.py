"""Task names come from the loop's own counter, so they repeat run after run."""

from __future__ import annotations

import asyncio

from invariants.aio import run


async def names() -> list[str]:
    async def nothing() -> None:
        await asyncio.sleep(0)

    tasks = [asyncio.create_task(nothing()) for _ in range(3)]
    await asyncio.gather(*tasks)
    current = asyncio.current_task()
    assert current is not None
    return [current.get_name()] + [task.get_name() for task in tasks]


def test_every_run_names_its_tasks_alike() -> None:
    first = run(names()).result
    second = run(names()).result
    assert first == second == ["Task-1", "Task-2", "Task-3", "Task-4"]


def test_the_stock_loop_counts_across_the_process() -> None:
    # Negative control: asyncio's names come from one process-wide counter.
    assert asyncio.run(names()) != asyncio.run(names())


def test_a_given_name_is_kept() -> None:
    async def main() -> str:
        task = asyncio.create_task(asyncio.sleep(0), name="mine")
        await task
        return task.get_name()

    assert run(main()).result == "mine"
