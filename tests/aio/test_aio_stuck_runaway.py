"""A run that can never finish is Stuck, naming every pending task and where it waits; one
that never lets time move is a Runaway."""

from __future__ import annotations

import asyncio

import pytest

from invariants.aio import Runaway, Stuck, VirtualLoop, run


async def waits_for_an_event(event: asyncio.Event) -> None:
    await event.wait()


async def deadlocked(set_later: bool) -> str:
    event = asyncio.Event()
    helper = asyncio.create_task(waits_for_an_event(event), name="helper")
    if set_later:
        asyncio.get_running_loop().call_later(1.0, event.set)
    await helper
    return "done"


def test_stuck_lists_every_pending_task_and_its_line() -> None:
    with pytest.raises(Stuck) as caught:
        run(deadlocked(set_later=False))
    message = str(caught.value)
    assert message.startswith(
        "stuck at t=0 ms after 2 steps: nothing is ready, no timer is armed, and the "
        "awaited work (Task-1) is unfinished.\n2 pending task(s):\n"
    )
    lines = message.splitlines()
    assert lines[2].startswith("  Task-1: waits in deadlocked() at test_aio_stuck_runaway.py:")
    assert lines[3].startswith("  helper: waits in waits_for_an_event() at test_aio_stuck_")
    assert "Event.wait() at locks.py:" in lines[3]


def test_negative_control_the_same_program_with_its_timer_finishes() -> None:
    result = run(deadlocked(set_later=True))
    assert (result.result, result.now_us) == ("done", 1_000_000)


def test_run_forever_with_nothing_to_do_is_stuck_too() -> None:
    loop = VirtualLoop()
    with pytest.raises(Stuck, match="the loop was asked to run for ever"):
        loop.run_forever()
    loop.close()


async def spinner(spins: int, pause: float) -> int:
    for _ in range(spins):
        await asyncio.sleep(pause)
    return spins


def test_runaway_names_the_budget_and_what_spins() -> None:
    with pytest.raises(Runaway) as caught:
        run(spinner(10_000, 0), step_budget=1000)
    message = str(caught.value)
    assert message.startswith("1000 steps without virtual time moving (t=0 ms, steps 1–1000)")
    assert message.endswith("ready now: Task-1")


def test_negative_control_time_moving_resets_the_budget() -> None:
    result = run(spinner(5000, 0.001), step_budget=1000)
    assert (result.result, result.now_us) == (5000, 5_000_000)


def test_the_budget_counts_per_instant_across_drives() -> None:
    loop = VirtualLoop(step_budget=50)

    async def spin() -> None:
        while True:
            await asyncio.sleep(0)

    loop.create_task(spin())
    with pytest.raises(Runaway):
        for _ in range(100):
            loop.advance(0)
