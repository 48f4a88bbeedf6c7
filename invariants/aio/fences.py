"""What the virtual loop refuses, and what it runs inline.

Another thread, real sockets, subprocesses and signals make a schedule depend on
something outside the loop, so each is a `FencedCall` naming the call. The loop's own
entry points to them are fenced here; what the mesh calls directly while the loop runs (a
thread start, a blocking socket or sleep) is caught by `invariants.aio.outside`, and its
wall-clock reads are the virtual clock's (`invariants.aio.wallclock`), for the time each
`run_forever` runs. Executors (`run_in_executor`, and so `asyncio.to_thread`) run the
function inline, at the step that asks, and deliver its result through a future resolved
at a later step, as a real executor would; one that waits on the loop
(`run_coroutine_threadsafe(...).result()`) would deadlock, so that call is fenced there.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Executor
from contextvars import Context
from typing import Any, NoReturn, TypeVar, TypeVarTuple, Unpack

from invariants.aio import outside, wallclock
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
    return outside.refuse(loop, call, f"{type(loop).__name__}.{call} is fenced: {why}")


# The fenced calls asyncio defines as plain methods; the others are coroutine methods.
_SYNCHRONOUS = frozenset({
    "add_reader", "remove_reader", "add_writer", "remove_writer",
    "add_signal_handler", "remove_signal_handler",
})


def _fence(call: str) -> Callable[..., Any]:
    why = FENCED[call]

    def fenced(self: FencedEventLoop, *args: Any, **kwargs: Any) -> Coroutine[Any, Any, Any]:
        site = outside.call_site(sys._getframe(1))
        error = fenced_call(self, call, f"{why} (called in {site})")
        if call in _SYNCHRONOUS or not self.is_running():
            raise error
        # A coroutine method while the loop runs: the refusal ends the drive as this step
        # returns, and the caller waits for ever instead of seeing the error, so the
        # program cannot catch it and log it (as a mesh's connect retry would, once per
        # example of a search, burying the one line under thousands).
        return _never(self)

    fenced.__name__ = fenced.__qualname__ = call
    fenced.__doc__ = f"Fenced: fails the run with FencedCall ({why})."
    return fenced


async def _never(loop: asyncio.AbstractEventLoop) -> NoReturn:
    await loop.create_future()
    raise AssertionError("a fenced call's future is never resolved")


class FencedEventLoop(asyncio.BaseEventLoop):
    """`asyncio.BaseEventLoop` with every nondeterministic entry fenced and executors run
    inline. The owning thread is the one that created the loop."""

    def __init__(self) -> None:
        super().__init__()
        self._owner_thread = threading.get_ident()
        self._fence_errors: list[FencedCall] = []
        self._window = outside.window(self)  # what each run_forever opens
        # The threads alive now: one started later and alive when the loop goes idle is
        # refused (`outside.before_idle`).
        self._threads_before = outside.Threads.now()
        self._executor_depth = 0  # > 0 while an executor function runs inline

    def call_soon_threadsafe(
        self, callback: Callable[[Unpack[_Ts]], object], *args: *_Ts,
        context: Context | None = None,
    ) -> asyncio.Handle:
        """From the loop's own thread, `call_soon`; from any other, fenced: while the loop
        runs, every thread but the one running it; while it does not, every thread but the
        one that created it (which drives it)."""
        here = threading.get_ident()
        running = self._thread_id  # type: ignore[attr-defined]
        if here != (self._owner_thread if running is None else running):
            state = "running in another thread" if running is not None else "not running"
            raise fenced_call(
                self, "call_soon_threadsafe",
                f"called from thread {threading.current_thread().name!r} "
                f"({outside.call_site(sys._getframe(1))}), not the loop's ({state}): "
                "another thread's timing is outside the virtual schedule (so are "
                "run_coroutine_threadsafe and wrap_future, which call it)",
            )
        if self._executor_depth and _waits_on_loop(callback):
            raise fenced_call(
                self, "run_coroutine_threadsafe",
                f"called from an executor function ({outside.call_site(sys._getframe(1))}): "
                "under the harness executors run inline on the loop's thread, so waiting "
                "for the coroutine would deadlock: await it from a task instead",
            )
        return self.call_soon(callback, *args, context=context)

    def run_in_executor(
        self, executor: Executor | None, func: Callable[[Unpack[_Ts]], _T], *args: *_Ts,
    ) -> asyncio.Future[_T]:
        """Run `func(*args)` now, inline; its result (or exception) resolves the returned
        future at a later step, in this step's lane."""
        self._check_closed()  # type: ignore[attr-defined]
        future: asyncio.Future[_T] = self.create_future()
        self._executor_depth += 1
        try:
            result = func(*args)
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as exc:  # delivered through the future, as an executor does
            self.call_soon(_deliver_exception, future, exc)
        else:
            self.call_soon(_deliver_result, future, result)
        finally:
            self._executor_depth -= 1
        return future

    def run_forever(self) -> None:
        """asyncio's, inside a window (`invariants.aio.outside`): while it runs, the mesh's
        calls to the world outside are refused and its clock reads are virtual. A drive
        that ends in a timeout or a stuck run after another thread's fenced call raises
        that call; a stuck run names the other threads alive."""
        previous = outside.enter(self._window)
        wallclock.opened()
        try:
            super().run_forever()
        except BaseException as error:
            instead = outside.failure(self, error)
            if instead is None:
                raise
            raise instead from error
        finally:
            wallclock.closed()
            outside.leave(previous)

    def run_until_complete(self, future: Any) -> Any:
        """asyncio's; a run whose program failed (a timeout, say) after a fenced call from
        another thread raises that call instead."""
        try:
            return super().run_until_complete(future)
        except BaseException as error:
            instead = outside.failure(self, error)
            if instead is None:
                raise
            raise instead from error

    def raise_fenced(self) -> None:
        """Raise the first fenced call since the last check, even if the program caught it."""
        if self._fence_errors:
            error = self._fence_errors[0]
            self._fence_errors.clear()
            raise error


for _call in FENCED:
    setattr(FencedEventLoop, _call, _fence(_call))
del _call


def _waits_on_loop(callback: object) -> bool:
    """Whether `callback` is `run_coroutine_threadsafe`'s, whose caller waits on the loop;
    if so its coroutine is closed (it will never run, and must not warn that it did not)."""
    if getattr(callback, "__qualname__", None) != "run_coroutine_threadsafe.<locals>.callback":
        return False
    for cell in getattr(callback, "__closure__", None) or ():
        contents = cell.cell_contents
        if asyncio.iscoroutine(contents):
            contents.close()
    return True


def _deliver_result(future: asyncio.Future[_T], result: _T) -> None:
    if not future.cancelled():
        future.set_result(result)


def _deliver_exception(future: asyncio.Future[Any], exc: BaseException) -> None:
    if not future.cancelled():
        future.set_exception(exc)
