"""Async generators on the virtual loop, each idiom run on `invariants.aio.run` and on
the stock `asyncio.run` (the control): the same log and the same result on both.

An async generator's `__anext__()`, `asend()`, `athrow()` and `aclose()` return awaitables
that asyncio takes for coroutines but that are not native ones; the loop's task book names
their tasks and leaves them alone, and the loop's asyncgen hooks finalize an abandoned
generator and close the live ones at shutdown, as asyncio's do.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import sys
import types
import warnings
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Generator
from typing import Any

import pytest

from invariants.aio import VirtualLoop, run
from invariants.aio.asyncgens import AsyncGenerators
from invariants.aio.tasks import TaskBook

Log = list[str]
Program = Callable[[Log], Awaitable[object]]


async def counter(log: Log, n: int = 3) -> AsyncIterator[int]:
    try:
        for i in range(n):
            log.append(f"yield {i}")
            yield i
    finally:
        log.append("finally")


async def echo(log: Log) -> AsyncIterator[str]:
    """Yields what it was sent; a ValueError thrown in is answered, not raised."""
    received = "start"
    try:
        while True:
            try:
                received = yield f"got {received}"
            except ValueError as exc:
                received = f"thrown {exc}"
    finally:
        log.append("echo closed")


async def settle() -> None:
    """A few steps, for tasks the finalizer hook scheduled to run."""
    for _ in range(3):
        await asyncio.sleep(0)


async def break_out(log: Log) -> object:
    async for x in counter(log):
        if x == 1:
            break
    log.append("after the loop")
    await settle()
    return x


async def anext_as_task(log: Log) -> object:
    agen = counter(log)
    first = await asyncio.create_task(agen.__anext__())
    second = await asyncio.ensure_future(agen.__anext__())
    third = await asyncio.wait_for(agen.__anext__(), timeout=10)
    with pytest.raises(StopAsyncIteration):
        await asyncio.create_task(agen.__anext__())
    return [first, second, third]


async def asend_athrow_as_tasks(log: Log) -> object:
    agen = echo(log)
    replies = [await asyncio.create_task(agen.asend(None))]
    replies.append(await asyncio.create_task(agen.asend("a")))
    replies.append(await asyncio.create_task(agen.athrow(ValueError("b"))))
    await asyncio.create_task(agen.aclose())
    log.append("after aclose")
    return replies


async def aclose_awaited(log: Log) -> object:
    agen = counter(log)
    value = await agen.__anext__()
    await agen.aclose()
    log.append("after aclose")
    return value


async def abandoned(log: Log) -> object:
    agen = counter(log)
    value = await agen.__anext__()
    del agen  # the finalizer hook schedules its aclose as a task
    log.append("dropped")
    await settle()
    return value


kept: list[AsyncIterator[int]] = []


async def left_open(log: Log) -> object:
    # Two generators still suspended when main returns: shutdown_asyncgens closes them.
    for n in (5, 6):
        agen = counter(log, n)
        kept.append(agen)
        await agen.__anext__()
    log.append("main returns")
    return len(kept)


async def cancelled_consumer(log: Log) -> object:
    async def consume() -> None:
        async for _ in counter(log, 100):
            await asyncio.sleep(0)

    task = asyncio.create_task(consume())
    for _ in range(4):
        await asyncio.sleep(0)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    await settle()
    return task.cancelled()


async def context_manager(log: Log) -> object:
    @contextlib.asynccontextmanager
    async def resource() -> AsyncIterator[str]:
        log.append("enter")
        try:
            yield "resource"
        finally:
            log.append("exit")

    async with resource() as value:
        log.append(f"using {value}")
    with pytest.raises(KeyError):
        async with resource():
            raise KeyError("inside")
    return value


async def comprehension(log: Log) -> object:
    return [x async for x in counter(log, 4) if x % 2 == 0]


IDIOMS: dict[str, Program] = {
    "break out of async for": break_out,
    "__anext__ as a task": anext_as_task,
    "asend and athrow as tasks": asend_athrow_as_tasks,
    "aclose awaited": aclose_awaited,
    "abandoned generator finalized": abandoned,
    "shutdown_asyncgens closes the open ones": left_open,
    "consumer cancelled mid-iteration": cancelled_consumer,
    "asynccontextmanager": context_manager,
    "async comprehension": comprehension,
}


def _outcome(runner: Callable[[Awaitable[object]], object], program: Program
             ) -> tuple[object, Log]:
    log: Log = []
    kept.clear()
    result = runner(program(log))  # type: ignore[arg-type]
    kept.clear()
    return result, log


def _virtual(main: Awaitable[object]) -> object:
    return run(main).result  # type: ignore[arg-type]


@pytest.mark.parametrize("idiom", list(IDIOMS))
def test_each_idiom_runs_as_on_the_stock_loop(idiom: str) -> None:
    program = IDIOMS[idiom]
    stock = _outcome(asyncio.run, program)  # type: ignore[arg-type]
    virtual = _outcome(_virtual, program)
    assert virtual == stock
    assert any("finally" in line or "closed" in line or "exit" in line for line in stock[1])


def test_the_control_a_program_that_differs_is_told_apart() -> None:
    # The comparison can fail: a program whose log depends on the loop it runs on.
    async def which_loop(log: Log) -> object:
        log.append(type(asyncio.get_running_loop()).__name__)
        return None

    assert _outcome(_virtual, which_loop) != _outcome(asyncio.run, which_loop)  # type: ignore[arg-type]


def test_the_hooks_finalize_and_shut_down_on_the_virtual_loop() -> None:
    # What the comparison relies on, seen on the virtual loop itself: an abandoned
    # generator's aclose runs as a task of the loop's own naming, during the run; the
    # generators left open are closed by `run`'s shutdown_asyncgens, in first-run order.
    log: Log = []
    run(abandoned(log))
    assert log == ["yield 0", "dropped", "finally"]
    log = []
    run(left_open(log))
    kept.clear()
    assert log == ["yield 0", "yield 0", "main returns", "finally", "finally"]


def test_a_finalizer_task_is_named_by_the_loop() -> None:
    async def main() -> list[str]:
        before = set(asyncio.all_tasks())
        agen = counter([])
        await agen.__anext__()
        del agen
        await asyncio.sleep(0)  # the hook's call_soon has run: the aclose task exists
        return sorted(t.get_name() for t in asyncio.all_tasks() - before)

    assert run(main()).result == ["Task-2"]


def test_shutdown_closes_in_first_run_order_whatever_the_addresses() -> None:
    # asyncio's WeakSet iterates in hash order; the loop's set in the order added.
    class Item:
        def __init__(self, key: int) -> None:
            self.key = key

        def __hash__(self) -> int:
            return self.key

    items = [Item(k) for k in range(20, 0, -1)]  # added with falling hashes
    ours, stocks = AsyncGenerators(), weakref.WeakSet[Item]()
    for item in items:
        ours.add(item)
        stocks.add(item)
    assert [i.key for i in ours] == [i.key for i in items]
    # The control: the stock set's order is not the order added.
    assert [i.key for i in stocks] != [i.key for i in items]
    ours.discard(items[0])
    assert len(ours) == 19 and items[0] not in list(ours)
    del item, items
    gc.collect()
    assert len(ours) == 0  # weak: garbage leaves it


def _not_coroutines(agen: Any) -> list[Any]:
    return [agen.__anext__(), agen.asend(None), agen.athrow(ValueError("x")), agen.aclose()]


class Awaitor:
    """A class implementing collections.abc.Coroutine, which asyncio also runs as a task."""

    def __init__(self) -> None:
        self._done = False

    def send(self, value: object) -> object:
        raise StopIteration("awaitor")

    def throw(self, *args: object) -> object:
        raise StopIteration("awaitor")

    def close(self) -> None:
        self._done = True

    def __await__(self) -> Generator[Any, None, str]:
        return self  # type: ignore[return-value]


def test_the_task_book_takes_awaitables_that_are_not_coroutines() -> None:
    class Owner:
        pass

    owner = Owner()
    book = TaskBook(owner)
    objects = [*_not_coroutines(counter([])), Awaitor()]
    names = [book.add(obj, None) for obj in objects]
    assert names == ["Task-1", "Task-2", "Task-3", "Task-4", "Task-5"]
    book.forget_started()  # read none of them as coroutines (no cr_running to read)
    del owner
    gc.collect()  # the book's finalizer closes unstarted coroutines only: none here
    for obj in objects[:4]:
        obj.close()


def test_the_task_book_still_closes_an_unstarted_coroutine() -> None:
    # The control: a native coroutine is still closed once its loop is gone.
    class Owner:
        pass

    owner = Owner()
    book = TaskBook(owner)
    coroutine = settle()
    book.add(coroutine, None)
    book.add(Awaitor(), None)
    book.forget_started()
    assert coroutine.cr_frame is not None
    del owner
    gc.collect()
    assert coroutine.cr_frame is None  # closed


def test_a_task_on_each_awaitable_runs_on_the_virtual_loop() -> None:
    async def main() -> list[object]:
        agen = echo([])
        loop = asyncio.get_running_loop()
        tasks = [loop.create_task(a) for a in (agen.asend(None), )]
        results: list[object] = [await tasks[0]]
        results.append(await loop.create_task(agen.athrow(ValueError("v"))))
        results.append(await loop.create_task(Awaitor()))  # type: ignore[arg-type]
        await loop.create_task(agen.aclose())
        return results

    expected = ["got start", "got thrown v", "awaitor"]
    assert run(main()).result == asyncio.run(main()) == expected


def test_run_until_complete_takes_an_anext_awaitable() -> None:
    loop = VirtualLoop()
    agen = counter([])
    assert loop.run_until_complete(agen.__anext__()) == 0
    assert loop.run_until_complete(agen.__anext__()) == 1
    loop.run_until_complete(agen.aclose())


def test_a_generator_with_timers_runs_in_virtual_time() -> None:
    async def ticker(period: float) -> AsyncIterator[int]:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(period)
            yield loop.now_us  # type: ignore[attr-defined]

    async def main() -> list[int]:
        ticks = []
        async for now in ticker(0.25):
            ticks.append(now)
            if len(ticks) == 3:
                break
        return ticks

    result = run(main())
    assert result.result == [250_000, 500_000, 750_000]
    assert result.now_us == 750_000


async def _consume_slowly() -> None:
    async for _ in counter([], 100):
        await asyncio.sleep(1)


def _drop_mid_run(stock_hook: bool) -> list[str]:
    """Drop a loop whose task is suspended inside a generator: the warnings raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loop = VirtualLoop()
        if stock_hook:
            loop._asyncgen_finalizer_hook = types.MethodType(  # type: ignore[method-assign]
                asyncio.BaseEventLoop._asyncgen_finalizer_hook, loop,  # type: ignore[attr-defined]
            )
        loop.create_task(_consume_slowly())
        loop.advance(1500)
        gone = weakref.ref(loop)
        del loop
        gc.collect()
        gc.collect()  # what the first collection's finalizers scheduled goes in the second
    assert gone() is None
    return [str(w.message) for w in caught]


def test_a_dropped_loop_with_a_suspended_generator_warns_of_nothing() -> None:
    # An adapter's loop is dropped mid-run; a generator suspended in one of its tasks goes
    # with it: its aclose task would never run, so the loop schedules none.
    assert _drop_mid_run(stock_hook=False) == []


@pytest.mark.skipif(sys.version_info < (3, 13), reason="3.13 warns of an unawaited aclose()")
def test_the_control_asyncios_own_hook_warns_there() -> None:
    assert _drop_mid_run(stock_hook=True) == [
        "coroutine method 'aclose' of 'counter' was never awaited"
    ]
