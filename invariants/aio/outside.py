"""What reaches outside the virtual loop while it runs: refused, named where it was called.

The loop runs one thread's callbacks in virtual time; anything that waits on the real
world (another thread, a socket, a blocking sleep, a subprocess) makes the schedule
depend on real timing. Three things catch it:

- The window: `enter`/`leave` mark which thread runs which virtual loop now (inside its
  `run_forever`). Everything below does nothing outside a window.
- An audit hook (`sys.addaudithook`, installed once, at the first window; it cannot be
  removed, so outside a window it returns after one truth test): starting a thread, a real
  socket's connect/bind/send/lookup, a blocking sleep, a subprocess, `os.system`, a fork or
  exec, made by the thread running a virtual loop, is a `FencedCall` raised at the call
  and naming its call site. 3.11 raises no audit event for a thread start, so there the
  hook is fed by a shim around `threading`'s own entry.
- `before_idle(loop)`: before virtual time moves (or the loop is stuck, or a drive ends),
  a fenced call recorded from another thread is raised, and a thread started since the
  loop was created and still alive is refused by name: work it may still deliver would
  land at a virtual time nobody chose.

A refusal is recorded on the loop and, when the loop is running, ends the drive once the
callback running now returns (`abort_step`), so code that swallows it still fails the run.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType
from typing import Any

from invariants.aio.errors import FencedCall, Stuck
from invariants.aio.schedule import format_time

# Module tops whose clock reads and calls are the harness's own, not the mesh's (and any
# of Hypothesis's own private top modules: `is_harness_module`).
HARNESS_MODULES = frozenset({
    "invariants", "harness", "hypothesis", "hypofuzz", "_pytest", "pytest",
    "pluggy", "xdist", "execnet", "pytest_timeout", "pytest_benchmark", "coverage",
})


def is_harness_module(top: str) -> bool:
    """Whether the top-level module `top` is the harness's, its test runner's or
    Hypothesis's own (its private tops too, whatever their names)."""
    return top in HARNESS_MODULES or top.lstrip("_").startswith("hypothesis")

_THREAD = (
    "another thread runs in real time, outside the virtual schedule, and the loop cannot "
    "wait for what it delivers: run the work in a task, or through asyncio.to_thread / "
    "loop.run_in_executor (inline under the harness)"
)
_SOCKET = (
    "a real socket makes the schedule depend on the network, which the virtual loop "
    "cannot replay: give the mesh an in-memory transport under the harness"
)
_SLEEP = (
    "a blocking sleep stops the whole loop in real time and moves no virtual time: "
    "await asyncio.sleep instead"
)
_PROCESS = (
    "a subprocess runs in real time, outside the virtual schedule: stand in for it with "
    "a coroutine under the harness"
)

# Audit events refused while a virtual loop runs on the calling thread, and why.
WATCHED: dict[str, str] = {
    "_thread.start_new_thread": _THREAD,
    "_thread.start_joinable_thread": _THREAD,  # 3.13's threading.Thread.start
    "time.sleep": _SLEEP,  # 3.13 audits it; the wall-clock shim covers 3.11 and 3.12
    **dict.fromkeys((
        "socket.connect", "socket.bind", "socket.sendto", "socket.sendmsg",
        "socket.getaddrinfo", "socket.getnameinfo", "socket.gethostbyname",
        "socket.gethostbyaddr",
    ), _SOCKET),
    **dict.fromkeys((
        "subprocess.Popen", "os.system", "os.exec", "os.spawn", "os.posix_spawn",
        "os.fork", "os.forkpty",
    ), _PROCESS),
}


@dataclass(frozen=True, slots=True)
class Window:
    """A virtual loop running on a thread; `clock` reads its virtual seconds (None for a
    loop keeping asyncio's real clock)."""

    loop: asyncio.AbstractEventLoop
    clock: Callable[[], float] | None


# Thread ident -> the virtual loop it runs now. Empty whenever no virtual loop runs, which
# is what every hook below tests first.
RUNNING: dict[int, Window] = {}

_installed = False
_install_lock = threading.Lock()
# Threads started in this process since the hook was installed (it counts every start, in
# a window or not: a thread started outside the loop may still deliver to it).
_thread_starts = [0]


def window(loop: asyncio.AbstractEventLoop) -> Window:
    """The window `loop` opens each time it runs (installing the hook on first use)."""
    if not _installed:
        _install()
    clock = loop.time if type(loop).time is not asyncio.BaseEventLoop.time else None
    return Window(loop, clock)


def enter(window: Window) -> Window | None:
    """`window`'s loop starts running on this thread. Returns what it replaces (for
    `leave`)."""
    here = threading.get_ident()
    previous = RUNNING.get(here)
    RUNNING[here] = window
    return previous


def leave(previous: Window | None) -> None:
    here = threading.get_ident()
    if previous is None:
        RUNNING.pop(here, None)
    else:
        RUNNING[here] = previous


def refuse(loop: object, call: str, message: str) -> FencedCall:
    """The `FencedCall` for `call`, recorded on `loop` (so a program that swallows it still
    fails: `FencedEventLoop.raise_fenced`) and, if the loop is running, ending its drive
    once the callback running now returns."""
    error = FencedCall(call, message)
    record = getattr(loop, "_fence_errors", None)
    if isinstance(record, list):
        record.append(error)
    abort = getattr(loop, "abort_step", None)
    if abort is not None and isinstance(loop, asyncio.AbstractEventLoop) and loop.is_running():
        abort(error)
    return error


# Call sites.

def _is_plumbing(frame: FrameType) -> bool:
    name = frame.f_globals.get("__name__")
    if not isinstance(name, str):
        return False
    return name.partition(".")[0] in sys.stdlib_module_names or name.startswith("invariants.aio")


def where(frame: FrameType) -> str:
    code = frame.f_code
    return f"{code.co_qualname}() at {os.path.basename(code.co_filename)}:{frame.f_lineno}"


def call_site(frame: FrameType | None) -> str:
    """`main() at app.py:12`: the innermost frame from `frame` out that is neither the
    standard library nor this package (the innermost frame if all are)."""
    first = frame
    while frame is not None and _is_plumbing(frame):
        frame = frame.f_back
    chosen = frame if frame is not None else first
    return where(chosen) if chosen is not None else "an unknown caller"


# The audit hook.

_THREAD_STARTS = frozenset({"_thread.start_new_thread", "_thread.start_joinable_thread"})


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event in _THREAD_STARTS:
        _thread_starts[0] += 1
    if RUNNING and event in WATCHED:
        _watched(event, args)


def _watched(event: str, args: tuple[Any, ...]) -> None:
    window = RUNNING.get(threading.get_ident())
    if window is None:
        return
    if event == "time.sleep" and not (args and isinstance(args[0], int | float) and args[0] > 0):
        return
    call, what = event, event
    if event.startswith("_thread.start"):
        owner = getattr(args[0], "__self__", None) if args else None
        if isinstance(owner, threading.Thread):  # one name on every version
            call = "threading.Thread.start"
            what = f"{call} (thread {owner.name!r})"
    site = call_site(sys._getframe(2))
    raise refuse(window.loop, call, f"{what} from {site} is fenced: {WATCHED[event]}")


def _install() -> None:
    global _installed
    with _install_lock:
        if _installed:
            return
        sys.addaudithook(_audit)
        if sys.version_info < (3, 12):
            _audit_thread_starts()
        _installed = True


def _audit_thread_starts() -> None:
    """3.11 raises no audit event when a thread starts: raise the one 3.12 raises, from
    the name `threading.Thread.start` calls."""
    start = threading._start_new_thread  # type: ignore[attr-defined]

    def start_new_thread(function: Callable[..., object], args: tuple[Any, ...],
                         kwargs: dict[str, Any] | None = None) -> int:
        sys.audit("_thread.start_new_thread", function, args, kwargs)
        return int(start(function, args) if kwargs is None else start(function, args, kwargs))

    threading._start_new_thread = start_new_thread  # type: ignore[attr-defined]


# Threads the loop may depend on.

@dataclass(frozen=True, slots=True)
class Threads:
    """The threads alive when a loop was created, and the count of thread starts then."""

    alive: weakref.WeakSet[threading.Thread]
    starts: int

    @classmethod
    def now(cls) -> Threads:
        return cls(weakref.WeakSet(threading.enumerate()), _thread_starts[0])

    def started_since(self) -> list[threading.Thread]:
        """Threads alive now, other than this one, that were not alive then."""
        if _thread_starts[0] == self.starts:  # none started since: one comparison
            return []
        here = threading.current_thread()
        return [t for t in threading.enumerate() if t is not here and t not in self.alive]


def _where_thread(thread: threading.Thread) -> str:
    frame = sys._current_frames().get(thread.ident or -1)
    return f"in {call_site(frame)}" if frame is not None else "starting"


def before_idle(loop: Any) -> None:
    """Nothing is ready on `loop`: before virtual time moves, the loop is declared stuck,
    or a drive ends, raise what another thread did or may still do. To be called first
    thing in `VirtualLoop._when_idle`.

    A fenced call recorded from another thread is raised first (the cause, not the
    timeout or stuck run it leads to); then a thread started since the loop was created
    and still alive is refused by name and where it runs now."""
    if loop._fence_errors:
        loop.raise_fenced()
    threads = loop._threads_before.started_since()
    if threads:
        named = ", ".join(f"{t.name!r} ({_where_thread(t)})" for t in threads)
        raise refuse(
            loop, "threading.Thread",
            f"{type(loop).__name__} would move on from t={format_time(round(loop.time() * 1e6))} "
            f"while thread(s) started since it was created are alive: {named}: work they may "
            f"still deliver would land at a virtual time nobody chose; {_THREAD}",
        )


def threads_report(before: Threads) -> str:
    """For a stuck run: every other live thread that may be what it waits on (any started
    since the loop was created, and any non-daemon one), and where each runs now; "" when
    there is none."""
    here = threading.current_thread()
    threads = [
        t for t in threading.enumerate()
        if t is not here and (t not in before.alive or not t.daemon)
    ]
    if not threads:
        return ""
    lines = [f"{len(threads)} other thread(s) alive, outside the virtual schedule (work "
             "the run waits on from one of them can never be delivered in virtual time):"]
    lines += [f"  {t.name!r}: {_where_thread(t)}" for t in threads]
    return "\n".join(lines)


def failure(loop: Any, error: BaseException) -> BaseException | None:
    """What a drive of `loop` that raised `error` should raise instead: the first fenced
    call recorded (the cause of a timeout or a stuck run), or a stuck report that names the
    other threads alive; None to let `error` through. A fenced call raised as itself is
    taken off the record (it is not raised twice)."""
    record: list[FencedCall] = loop._fence_errors
    if isinstance(error, FencedCall):
        if error in record:
            record.remove(error)
        return None
    if not isinstance(error, Exception):
        return None
    if record:
        first = record[0]
        record.clear()
        return first
    if isinstance(error, Stuck):
        threads = threads_report(loop._threads_before)
        if threads:
            return Stuck(f"{error}\n{threads}")
    return None
