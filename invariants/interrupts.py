"""Signals are interrupts, never verdicts.

An interrupt (SIGINT, Ctrl-C) or a termination (SIGTERM, SIGHUP) ends a harness command
with no verdict: exit 128 + the signal's number (130, 143, 129), one line saying so, and
no child process left behind. `handled()` installs the handlers every entry point uses
(the CLI for each command, the pytest plugin for a harness run):

- SIGINT raises `KeyboardInterrupt`, SIGTERM and SIGHUP raise `Terminated`, a subclass of
  it: whatever lets an interrupt through lets a termination through too (`except
  Exception` passes it by, Hypothesis re-raises it at once instead of shrinking it, pytest
  ends the session). Never `SystemExit`, which Hypothesis and the mutation score take for
  the outcome of the code under test.
- An exception raised where Python can only print it as "ignored" is lost: in a garbage
  collector callback (Hypothesis installs one, and an allocation-heavy step spends long
  in the collector, so a signal is often handled just as its callback starts), in a
  `__del__` or a weakref callback. There the signal is delivered again a moment later,
  once that code has returned.
- `deferred()` holds signals while cleanup that must finish runs (stopping a process
  group, a pool's workers), then delivers them as they would have been.
- Pool workers (`in_worker`) ignore SIGINT: the terminal sends it to the whole process
  group, and the parent, which gets it too, ends its pools (`stop_pool`); a worker that
  died of it would otherwise read as a crash of the work it held.
"""

from __future__ import annotations

import _thread
import gc
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Collection, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

SIGNALS: tuple[signal.Signals, ...] = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
STOP_GRACE_SECONDS = 2.0  # a stopped child's time to exit before SIGKILL
REDELIVERY_SECONDS = 0.005  # a signal that arrived where it cannot be raised: again after

Handler = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised in the main thread: the process was told to stop."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def signal_of(exc: BaseException) -> int:
    """The signal behind an interrupt: a `Terminated`'s own, else SIGINT."""
    return exc.signum if isinstance(exc, Terminated) else int(signal.SIGINT)


def exit_code(exc: BaseException) -> int:
    """What a shell reports for a process the signal ended: 128 + its number."""
    return 128 + signal_of(exc)


def name_of(exc: BaseException) -> str:
    return signal.Signals(signal_of(exc)).name


def interrupt_for(signum: int) -> KeyboardInterrupt:
    return KeyboardInterrupt() if signum == signal.SIGINT else Terminated(signum)


class _State:
    installed = 0  # nesting depth of `handled()`
    received: int | None = None  # the first signal since the outermost `handled()`


_STATE = _State()


def received() -> int | None:
    """The first interrupting signal since the handlers were installed, or None."""
    return _STATE.received


def raise_received() -> None:
    """Raise the interrupt for the signal received, if any (where work was cut short by
    it: a worker the same signal killed, say)."""
    if _STATE.received is not None:
        raise interrupt_for(_STATE.received)


def in_gc_callback(frame: FrameType | None) -> bool:
    """Whether `frame` runs a garbage-collector callback, where an exception is printed
    as "ignored" and lost."""
    callbacks = {getattr(c, "__code__", None) for c in gc.callbacks}
    while frame is not None:
        if frame.f_code in callbacks:
            return True
        frame = frame.f_back
    return False


def _deliver_later(signum: int) -> None:
    """The signal again, a moment from now, from another thread: by then the callback it
    arrived in has returned. (Raised again at once, it would be handled before that, in
    the handler itself, and so on without end.)"""

    def deliver() -> None:
        time.sleep(REDELIVERY_SECONDS)
        if _STATE.installed:  # not once the run has ended (by this interrupt, raised elsewhere)
            os.kill(os.getpid(), signum)

    _thread.start_new_thread(deliver, ())


def _interrupt(signum: int, frame: FrameType | None) -> None:
    if _STATE.received is None:
        _STATE.received = signum
    if in_gc_callback(frame):
        _deliver_later(signum)
        return
    raise interrupt_for(signum)


def _unraisable_hook(previous: Callable[[Any], object]) -> Callable[[Any], object]:
    def hook(unraisable: Any) -> object:
        exc = getattr(unraisable, "exc_value", None)
        if isinstance(exc, KeyboardInterrupt) and _STATE.installed:
            _deliver_later(signal_of(exc))  # lost here (a __del__, a weakref callback)
            return None
        return previous(unraisable)

    return hook


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _set(signum: signal.Signals, handler: Handler) -> Handler:
    """Install `handler`, returning the one it replaced (SIG_DFL where Python had none)."""
    previous = signal.signal(signum, signal.SIG_DFL if handler is None else handler)
    return signal.SIG_DFL if previous is None else previous


@contextmanager
def handled() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP raise their interrupt in the block (main thread only;
    elsewhere the block runs as it is). The first signal is kept for `received()`."""
    if not _main_thread():
        yield
        return
    previous = {s: _set(s, _interrupt) for s in SIGNALS}
    previous_hook = sys.unraisablehook
    if not _STATE.installed:
        _STATE.received = None
        sys.unraisablehook = _unraisable_hook(previous_hook)
    _STATE.installed += 1
    try:
        yield
    finally:
        _STATE.installed -= 1
        if not _STATE.installed:
            sys.unraisablehook = previous_hook
            _STATE.received = None
        for signum, handler in previous.items():
            _set(signum, handler)


@contextmanager
def deferred() -> Iterator[None]:
    """Signals that arrive in the block are held until it ends, then delivered as they
    would have been: cleanup that must finish is not cut short."""
    if not _main_thread():
        yield
        return
    held: list[int] = []

    def hold(signum: int, _frame: FrameType | None) -> None:
        held.append(signum)

    previous = {s: _set(s, hold) for s in SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            _set(signum, handler)
        if held:
            signal.raise_signal(held[0])


@contextmanager
def ignored() -> Iterator[None]:
    """Signals that arrive in the block are dropped (the command is already ending)."""
    if not _main_thread():
        yield
        return
    previous = {s: _set(s, signal.SIG_IGN) for s in SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            _set(signum, handler)


@contextmanager
def forking() -> Iterator[None]:
    """Around the start of forked workers: the signals are blocked in this thread, so a
    child is born with them blocked (until `in_worker`) and does not run the parent's
    handlers first; here they wait until the block ends."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def in_worker() -> None:
    """For a forked pool worker (started under `forking`): SIGINT ignored (the parent ends
    the pool), SIGTERM and SIGHUP as by default (a worker told to stop stops), nothing of
    the parent's handlers; and on Linux, killed when its parent dies, however it dies (a
    worker's own pool, say that of the scan a mutation worker runs, goes with it)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, SIGNALS)
    _die_with_parent()


_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _die_with_parent() -> None:
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import multiprocessing

    parent = multiprocessing.parent_process()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) != 0:
            return
    except (OSError, AttributeError):
        return
    if parent is not None and os.getppid() != parent.pid:  # it died before the prctl
        os._exit(1)


def stop_pool(pool: ProcessPoolExecutor, grace_seconds: float = STOP_GRACE_SECONDS) -> None:
    """End a process pool now: pending work cancelled, every worker terminated (SIGKILL
    after `grace_seconds`) and waited for. For a pool cut short by an exception: its
    `with` block would wait for every pending task first. Returns once the pool's own
    manager thread has ended too."""
    with deferred():
        # Private, but there since the pool exists; with fork every worker starts at once.
        processes = list((getattr(pool, "_processes", None) or {}).values())
        # The pool's manager thread closes its wake-up pipe as it ends; left running, it
        # races the interpreter's exit hook that writes to that pipe (an "ignored" EBADF
        # traceback). Taken before `shutdown`, which drops the pool's reference to it.
        manager = getattr(pool, "_executor_manager_thread", None)
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.terminate()
        # With its workers stopped it joins them and ends: wait for it first, since a
        # worker it reaps while this thread polls the same one would read as alive here.
        if manager is not None:
            manager.join(grace_seconds)
        for process in processes:
            process.join(grace_seconds)
            if process.is_alive():
                process.kill()
                process.join()
        if manager is not None:
            manager.join(grace_seconds)  # a worker that needed SIGKILL held it up


def children(pid: int) -> list[int]:
    """The direct children of `pid` (Linux: /proc/<pid>/task/*/children), [] elsewhere."""
    found: list[int] = []
    for listing in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            found += [int(n) for n in listing.read_text(encoding="ascii").split()]
        except (OSError, ValueError):
            continue  # the thread or the process went while we looked
    return found


def descendants(pid: int) -> list[int]:
    """Every process below `pid`, parents before their children."""
    found: list[int] = []
    frontier = [pid]
    while frontier:
        below = [c for p in frontier for c in children(p) if c not in found]
        found += below
        frontier = below
    return found


def running(pid: int) -> bool:
    """Whether `pid` still runs (a zombie awaiting its reaper does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return False
    fields = stat[stat.rfind(")") + 2 :].split()
    return bool(fields) and fields[0] not in ("Z", "X")


def stop_children(
    grace_seconds: float = STOP_GRACE_SECONDS, spare: Collection[int] = ()
) -> None:
    """SIGTERM every process below this one but those in `spare` (what ran before the
    command: the caller's, when it runs in-process), each whole group it leads too; SIGKILL
    what still runs after `grace_seconds`: nothing a command started outlives it."""
    with deferred():
        below = [pid for pid in descendants(os.getpid()) if pid not in spare]
        for pid in below:
            _kill(pid, signal.SIGTERM)
        settled = threading.Event()
        for _ in range(max(1, int(grace_seconds / 0.05))):
            now = [pid for pid in descendants(os.getpid()) if pid not in spare]
            below = [pid for pid in dict.fromkeys(below + now) if running(pid)]
            if not below:
                return
            settled.wait(0.05)
        for pid in below:
            _kill(pid, signal.SIGKILL)


def _kill(pid: int, signum: signal.Signals) -> None:
    try:
        if os.getpgid(pid) == pid:  # it leads a group (a session of its own): all of it
            os.killpg(pid, signum)
        else:
            os.kill(pid, signum)
    except (ProcessLookupError, PermissionError):
        pass  # gone already
