"""What the virtual loop refuses, and what it runs inline.

Another thread, real sockets, subprocesses and signals make a schedule depend on
something outside the loop, so each is a `FencedCall` naming the call. Executors
(`run_in_executor`, and so `asyncio.to_thread`) run the function inline, at the step that
asks, and deliver its result through a future resolved at a later step, as a real executor
would.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import Executor
from contextvars import Context
from typing import Any, NoReturn, TypeVar, TypeVarTuple, Unpack

from invariants.aio.errors import FencedCall

_T = TypeVar("_T")
_Ts = TypeVarTuple("_Ts")

_SOCKETS = (
    "real sockets make the schedule depend on the network, which the virtual loop cannot "
    "replay: give the mesh an in-memory transport under the harness"
)
_IO = (
    "file-descriptor readiness comes from the operating system, outside the virtual "
    "schedule: give the mesh an in-memory transport under the harness"
)
_PROCESSES = (
    "a subprocess runs in real time, outside the virtual schedule: stand in for it with "
    "a coroutine under the harness"
)
_SIGNALS = (
    "signals arrive in real time, outside the virtual schedule: drive the mesh's stop "
    "through the adapter instead"
)

FENCED: dict[str, str] = {
    **dict.fromkeys((
        "create_connection", "create_server", "create_datagram_endpoint",
        "create_unix_connection", "create_unix_server", "connect_accepted_socket",
        "start_tls", "sendfile", "getaddrinfo", "getnameinfo",
        "sock_recv", "sock_recv_into", "sock_recvfrom", "sock_recvfrom_into",
        "sock_sendall", "sock_sendto", "sock_connect", "sock_accept", "sock_sendfile",
    ), _SOCKETS),
    **dict.fromkeys((
        "add_reader", "remove_reader", "add_writer", "remove_writer",
        "connect_read_pipe", "connect_write_pipe",
    ), _IO),
    **dict.fromkeys(("subprocess_exec", "subprocess_shell"), _PROCESSES),
    **dict.fromkeys(("add_signal_handler", "remove_signal_handler"), _SIGNALS),
}


def fenced_call(loop: object, call: str, why: str) -> FencedCall:
    """The error for `call`, recorded on `loop` (so code that swallows it still fails the
    run: see `FencedEventLoop.raise_fenced`)."""
    error = FencedCall(call, f"{type(loop).__name__}.{call} is fenced: {why}")
    record = getattr(loop, "_fence_errors", None)
    if isinstance(record, list):
        record.append(error)
    return error


def _fence(call: str) -> Callable[..., NoReturn]:
    why = FENCED[call]

    def fenced(self: FencedEventLoop, *args: Any, **kwargs: Any) -> NoReturn:
        raise fenced_call(self, call, why)

    fenced.__name__ = fenced.__qualname__ = call
    fenced.__doc__ = f"Fenced: raises FencedCall ({why})."
    return fenced


class FencedEventLoop(asyncio.BaseEventLoop):
    """`asyncio.BaseEventLoop` with every nondeterministic entry fenced and executors run
    inline. The owning thread is the one that created the loop."""

    def __init__(self) -> None:
        super().__init__()
        self._owner_thread = threading.get_ident()
        self._fence_errors: list[FencedCall] = []

    def call_soon_threadsafe(
        self, callback: Callable[[Unpack[_Ts]], object], *args: *_Ts,
        context: Context | None = None,
    ) -> asyncio.Handle:
        """From the loop's own thread, `call_soon`; from another thread, fenced."""
        here = threading.get_ident()
        running = self._thread_id  # type: ignore[attr-defined]
        if here != self._owner_thread and here != running:
            raise fenced_call(
                self, "call_soon_threadsafe",
                f"called from thread {threading.current_thread().name!r}, not the loop's: "
                "another thread's timing is outside the virtual schedule",
            )
        return self.call_soon(callback, *args, context=context)

    def run_in_executor(
        self, executor: Executor | None, func: Callable[[Unpack[_Ts]], _T], *args: *_Ts,
    ) -> asyncio.Future[_T]:
        """Run `func(*args)` now, inline; its result (or exception) resolves the returned
        future at a later step, in this step's lane."""
        self._check_closed()  # type: ignore[attr-defined]
        future: asyncio.Future[_T] = self.create_future()
        try:
            result = func(*args)
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as exc:  # delivered through the future, as an executor does
            self.call_soon(_deliver_exception, future, exc)
        else:
            self.call_soon(_deliver_result, future, result)
        return future

    def raise_fenced(self) -> None:
        """Raise the first fenced call since the last check, even if the program caught it."""
        if self._fence_errors:
            error = self._fence_errors[0]
            self._fence_errors.clear()
            raise error


for _call in FENCED:
    setattr(FencedEventLoop, _call, _fence(_call))
del _call


def _deliver_result(future: asyncio.Future[_T], result: _T) -> None:
    if not future.cancelled():
        future.set_result(result)


def _deliver_exception(future: asyncio.Future[Any], exc: BaseException) -> None:
    if not future.cancelled():
        future.set_exception(exc)
