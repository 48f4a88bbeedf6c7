"""Every call the loop cannot make deterministic is fenced with an error naming it;
executors run inline."""

from __future__ import annotations

import asyncio
import socket
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from invariants.aio import FencedCall, VirtualLoop, run


def _fenced(call: str, body: Callable[[], Awaitable[Any]]) -> None:
    async def main() -> None:
        await body()

    with pytest.raises(FencedCall) as caught:
        run(main())
    assert caught.value.call == call
    assert str(caught.value).startswith(f"VirtualLoop.{call} is fenced: ")


async def _loop() -> asyncio.AbstractEventLoop:
    return asyncio.get_running_loop()


def test_open_connection_is_fenced() -> None:
    _fenced("create_connection", lambda: asyncio.open_connection("127.0.0.1", 9))


def test_start_server_is_fenced() -> None:
    async def serve() -> None:
        await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)

    _fenced("create_server", serve)


def test_getaddrinfo_is_fenced() -> None:
    async def resolve() -> None:
        await (await _loop()).getaddrinfo("localhost", 80)

    _fenced("getaddrinfo", resolve)


def test_socket_calls_are_fenced() -> None:
    async def receive() -> None:
        left, right = socket.socketpair()
        try:
            await (await _loop()).sock_recv(left, 1)
        finally:
            left.close()
            right.close()

    _fenced("sock_recv", receive)


def test_subprocesses_are_fenced() -> None:
    _fenced("subprocess_exec", lambda: asyncio.create_subprocess_exec(sys.executable, "-V"))
    _fenced("subprocess_shell", lambda: asyncio.create_subprocess_shell("true"))


def test_signal_handlers_are_fenced() -> None:
    import signal

    async def handle() -> None:
        (await _loop()).add_signal_handler(signal.SIGUSR1, lambda: None)

    _fenced("add_signal_handler", handle)


def test_readers_are_fenced() -> None:
    async def read() -> None:
        (await _loop()).add_reader(0, lambda: None)

    _fenced("add_reader", read)


def test_call_soon_threadsafe_from_another_thread_is_fenced() -> None:
    loop = VirtualLoop()
    errors: list[BaseException] = []

    def other() -> None:
        try:
            loop.call_soon_threadsafe(lambda: None)
        except FencedCall as error:
            errors.append(error)

    thread = threading.Thread(target=other, name="intruder")
    thread.start()
    thread.join()
    assert len(errors) == 1
    assert "call_soon_threadsafe is fenced: called from thread 'intruder'" in str(errors[0])
    # Negative control: from the loop's own thread it is call_soon.
    ran: list[int] = []
    loop.call_soon_threadsafe(ran.append, 1)
    with pytest.raises(FencedCall):  # the intruder's call is reported when the drive ends
        loop.run_until_idle(0)
    assert ran == [1]


def test_a_swallowed_fence_still_fails_the_run() -> None:
    async def careless() -> str:
        try:
            await asyncio.open_connection("127.0.0.1", 9)
        except Exception:
            return "carried on"
        return "connected"

    with pytest.raises(FencedCall, match="create_connection"):
        run(careless())


def test_to_thread_runs_inline_at_the_asking_step() -> None:
    async def main() -> list[str]:
        log: list[str] = []
        here = threading.get_ident()

        def work() -> str:
            log.append("work" if threading.get_ident() == here else "other thread")
            return "result"

        async def neighbour() -> None:
            log.append("neighbour")

        task = asyncio.create_task(neighbour())
        log.append(await asyncio.to_thread(work))
        await task
        return log

    # The function ran at once, in the loop's thread; the awaiting task suspended (its
    # neighbour ran) before the result arrived through the future.
    assert run(main()).result == ["work", "neighbour", "result"]


def test_an_executors_exception_arrives_through_the_future() -> None:
    async def main() -> str:
        def fail() -> None:
            raise KeyError("boom")

        try:
            await asyncio.get_running_loop().run_in_executor(None, fail)
        except KeyError as error:
            return str(error)
        return "no error"

    assert run(main()).result == "'boom'"
