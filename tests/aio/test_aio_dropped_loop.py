"""A virtual loop dropped before its tasks ran (an adapter made only to read its
capabilities) closes their coroutines: no "never awaited" warning, which the suite turns
into an error. The control: the same coroutine dropped outside the loop warns."""

from __future__ import annotations

import asyncio
import gc
import warnings
import weakref

from invariants.aio import VirtualLoop


async def _pump() -> None:
    await asyncio.sleep(1)


def _unawaited(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if "never awaited" in str(w.message)]


def test_a_dropped_loop_leaves_no_coroutine_unawaited() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loop = VirtualLoop()
        loop.create_task(_pump())
        del loop
        gc.collect()
    assert _unawaited(caught) == []


def test_the_control_a_coroutine_dropped_unawaited_warns() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        coroutine = _pump()
        del coroutine
        gc.collect()
    assert _unawaited(caught) == ["coroutine '_pump' was never awaited"]


def test_a_task_that_ran_is_left_as_it_is() -> None:
    loop = VirtualLoop()
    task = loop.create_task(_pump())
    loop.run_until_complete(task)
    assert task.done() and task.exception() is None


async def _holds_its_loop() -> None:
    loop = asyncio.get_running_loop()  # a mesh's tasks hold their mesh, and so its loop
    await asyncio.sleep(10)
    assert loop.is_running()


def test_a_driven_loop_dropped_mid_run_is_garbage() -> None:
    # Every run makes a mesh and drops it mid-way; the loop, with all the mesh ran, must go
    # with it. (Before, the loop's finalizer held every task's coroutine, and a suspended
    # one holds the loop: each run's loop and trace stayed for good.)
    loop = VirtualLoop()
    loop.create_task(_holds_its_loop())
    loop.advance(1)
    gone = weakref.ref(loop)
    del loop
    gc.collect()
    assert gone() is None
