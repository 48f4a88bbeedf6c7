"""Nothing outside the virtual loop goes unseen: another thread, a blocking call, a real
socket or process, made while the loop runs, is refused naming the call and its call site,
and the run fails with it. Each idiom beside its control: the same code on the stock loop
(or outside the loop), or the loop without the check."""

from __future__ import annotations

import asyncio
import gc
import socket
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from invariants.aio import FencedCall, Stuck, VirtualLoop, run

HERE = "test_aio_outside_world.py:"


def _fenced(main: Coroutine[Any, Any, Any]) -> FencedCall:
    with pytest.raises(FencedCall) as caught:
        run(main)
    return caught.value


# A thread resolving a future while the task waits in wait_for.

async def thread_delivers(name: str) -> int:
    loop = asyncio.get_running_loop()
    future: asyncio.Future[int] = loop.create_future()
    threading.Thread(
        target=lambda: loop.call_soon_threadsafe(future.set_result, 42), name=name,
    ).start()
    return await asyncio.wait_for(future, 5)


def test_a_thread_started_in_a_step_is_refused_where_it_is_started() -> None:
    assert asyncio.run(thread_delivers("stock")) == 42  # control: the stock loop gets it
    error = _fenced(thread_delivers("deliverer"))
    assert error.call == "threading.Thread.start"
    assert str(error).startswith(
        f"threading.Thread.start (thread 'deliverer') from thread_delivers() at {HERE}"
    )
    assert "deliverer" not in [t.name for t in threading.enumerate()]  # it never started


def test_a_thread_calling_in_fails_the_run_when_it_calls_not_at_a_timeout() -> None:
    def program() -> tuple[Callable[[], Coroutine[Any, Any, int]], threading.Thread,
                           list[BaseException]]:
        asked, answered = threading.Event(), threading.Event()
        box: dict[str, Any] = {}
        errors: list[BaseException] = []

        def deliver() -> None:  # started before the loop: it is not the loop's to see
            asked.wait()
            try:
                box["loop"].call_soon_threadsafe(box["future"].set_result, 42)
            except FencedCall as error:
                errors.append(error)
            answered.set()

        async def main() -> int:
            box["loop"] = asyncio.get_running_loop()
            box["future"] = box["loop"].create_future()
            asked.set()
            answered.wait()  # the thread has called in before this step ends
            return int(await asyncio.wait_for(box["future"], 5))

        thread = threading.Thread(target=deliver, name="deliverer")
        thread.start()
        return main, thread, errors

    main, thread, errors = program()
    assert asyncio.run(main()) == 42  # control: on the stock loop the value arrives
    thread.join()
    assert errors == []

    main, thread, errors = program()
    loop = VirtualLoop()
    with pytest.raises(FencedCall) as caught:
        loop.run_until_complete(main())
    thread.join()
    # Refused in the thread, at its call, naming the thread and its line; the run failed
    # with that error as the step ended, before virtual time moved toward the timeout.
    assert errors == [caught.value]
    assert caught.value.call == "call_soon_threadsafe"
    assert "called from thread 'deliverer' (" in str(caught.value)
    assert f"deliver() at {HERE}" in str(caught.value)
    assert loop.now_us == 0
    loop.close()


def test_a_cross_thread_call_is_refused_whether_or_not_the_loop_runs() -> None:
    loop = VirtualLoop()
    errors: list[BaseException] = []

    def call_in() -> None:
        try:
            loop.call_soon_threadsafe(lambda: None)
        except FencedCall as error:
            errors.append(error)

    def from_thread() -> None:
        thread = threading.Thread(target=call_in, name="intruder")
        thread.start()
        thread.join()

    from_thread()  # between drives
    assert "thread 'intruder'" in str(errors[-1]) and "(not running)" in str(errors[-1])
    with pytest.raises(FencedCall, match="intruder"):  # the next drive fails with it
        loop.run_until_idle(0)
    loop.close()
    from_thread()  # after the run is over
    assert len(errors) == 2 and "thread 'intruder'" in str(errors[-1])
    # Control: on a closed stock loop the same call is asyncio's own error, nothing names
    # the thread.
    stock = asyncio.new_event_loop()
    stock.close()
    with pytest.raises(RuntimeError, match="Event loop is closed"):
        stock.call_soon_threadsafe(lambda: None)


# An executor function waiting on the loop.

async def executor_waits_on_the_loop() -> int:
    loop = asyncio.get_running_loop()

    async def answer() -> int:
        return 7

    def work() -> int:
        return asyncio.run_coroutine_threadsafe(answer(), loop).result(timeout=10)

    return await loop.run_in_executor(None, work)


def test_an_executor_function_waiting_on_the_loop_is_refused_not_deadlocked() -> None:
    assert asyncio.run(executor_waits_on_the_loop()) == 7  # control: a real executor thread
    with warnings.catch_warnings(record=True) as caught_warnings:
        warnings.simplefilter("always")
        error = _fenced(executor_waits_on_the_loop())
        gc.collect()
    assert error.call == "run_coroutine_threadsafe"
    assert f"executor function (executor_waits_on_the_loop.<locals>.work() at {HERE}" in str(
        error
    )
    # Its coroutine is closed, not left to warn that it was never awaited.
    assert [str(w.message) for w in caught_warnings if "never awaited" in str(w.message)] == []


def test_negative_control_an_executor_function_that_only_schedules_runs() -> None:
    async def main() -> list[str]:
        loop = asyncio.get_running_loop()
        log: list[str] = []
        await loop.run_in_executor(None, lambda: loop.call_soon_threadsafe(log.append, "ran"))
        await asyncio.sleep(0)
        return log

    assert run(main()).result == ["ran"]


# A thread pool behind wrap_future.

def test_a_pool_started_in_a_step_is_refused_at_submit() -> None:
    async def main() -> int:
        with ThreadPoolExecutor(thread_name_prefix="pool") as pool:
            return int(await asyncio.wrap_future(pool.submit(lambda: 3)))

    assert asyncio.run(main()) == 3  # control
    error = _fenced(main())
    assert error.call == "threading.Thread.start"
    assert f"from test_a_pool_started_in_a_step_is_refused_at_submit.<locals>.main() at {HERE}" in (
        str(error)
    )


def test_a_stuck_run_names_the_pool_thread_it_waits_on() -> None:
    started, release = threading.Event(), threading.Event()

    def blocker() -> int:
        started.set()
        release.wait()
        return 5

    async def main(pool: ThreadPoolExecutor) -> int:
        future = pool.submit(blocker)
        started.wait()  # the worker is in blocker() before the loop looks
        return int(await asyncio.wrap_future(future))

    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="warm")
    pool.submit(int).result()  # its worker exists before the loop does
    try:
        with pytest.raises(Stuck) as caught:
            run(main(pool))
    finally:
        release.set()
        pool.shutdown()
    message = str(caught.value)
    assert "1 other thread(s) alive, outside the virtual schedule" in message
    assert "'warm_0': in test_a_stuck_run_names_the_pool_thread_it_waits_on.<locals>.blocker()" \
        f" at {HERE}" in message


def test_negative_control_a_stuck_run_without_threads_names_none() -> None:
    async def main() -> None:
        await asyncio.Event().wait()

    with pytest.raises(Stuck) as caught:
        run(main())
    assert "other thread" not in str(caught.value)


# Blocking calls.

async def sleeps_blocking(seconds: float) -> str:
    time.sleep(seconds)
    return "slept"


def test_a_blocking_sleep_in_a_step_is_refused_with_its_call_site() -> None:
    error = _fenced(sleeps_blocking(0.01))
    assert error.call == "time.sleep"
    assert str(error).startswith(f"time.sleep(0.01) from sleeps_blocking() at {HERE}")
    assert run(sleeps_blocking(0)).result == "slept"  # control: a sleep of 0 blocks nothing


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_real_connections_in_a_step_are_refused_even_when_swallowed() -> None:
    port = _closed_port()
    attempts: list[str] = []

    async def connects_and_carries_on() -> int:
        for _ in range(101):
            try:
                with socket.socket() as sock:
                    sock.connect(("127.0.0.1", port))
            except Exception as error:
                attempts.append(type(error).__name__)
        return len(attempts)

    error = _fenced(connects_and_carries_on())
    assert error.call == "socket.connect"
    assert f".<locals>.connects_and_carries_on() at {HERE}" in str(error)
    assert set(attempts) == {"FencedCall"}  # no connection was attempted for real
    # Control: outside the loop the hook lets the same connect through to the network.
    with socket.socket() as sock, pytest.raises(ConnectionRefusedError):
        sock.connect(("127.0.0.1", port))


def test_a_subprocess_in_a_step_is_refused() -> None:
    async def spawns() -> int:
        return subprocess.run([sys.executable, "-c", "pass"], check=True).returncode

    error = _fenced(spawns())
    assert error.call == "subprocess.Popen"
    assert f"from test_a_subprocess_in_a_step_is_refused.<locals>.spawns() at {HERE}" in str(error)


# A thread the run may depend on, alive when virtual time would move.

def _late_thread_program(loop: VirtualLoop) -> tuple[Coroutine[Any, Any, int], threading.Event]:
    """A thread started after the loop was created (by the test, outside any step) that
    would deliver after a while; the task waits for it under a 5 s timeout."""
    go = threading.Event()
    future: asyncio.Future[int] = loop.create_future()

    def deliver() -> None:
        go.wait()  # a delivery that takes real time

    threading.Thread(target=deliver, name="late").start()

    async def main() -> int:
        return await asyncio.wait_for(future, 5)

    return main(), go


def test_virtual_time_does_not_move_past_a_live_thread() -> None:
    loop = VirtualLoop()
    main, go = _late_thread_program(loop)
    try:
        with pytest.raises(FencedCall) as caught:
            loop.run_until_complete(main)
    finally:
        go.set()
    message = str(caught.value)
    assert message.startswith("VirtualLoop would move on from t=0 ms while thread(s) started")
    assert f"'late' (in _late_thread_program.<locals>.deliver() at {HERE}" in message
    assert loop.now_us == 0
    loop.close()


def test_negative_control_once_the_thread_has_ended_time_jumps_to_the_timeout() -> None:
    loop = VirtualLoop()
    main, go = _late_thread_program(loop)
    go.set()
    for thread in threading.enumerate():
        if thread.name == "late":
            thread.join()
    with pytest.raises(TimeoutError):
        loop.run_until_complete(main)
    assert loop.now_us == 5_000_000
    loop.close()
