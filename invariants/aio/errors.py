"""The errors the virtual loop raises: each names what happened and where."""

from __future__ import annotations


class VirtualLoopError(RuntimeError):
    """Base of every error the virtual loop raises about the program it runs."""


class FencedCall(VirtualLoopError):
    """The program called something the virtual loop cannot make deterministic (another
    thread, real sockets, subprocesses, signals). `call` is the method's name."""

    def __init__(self, call: str, message: str) -> None:
        super().__init__(message)
        self.call = call


class Stuck(VirtualLoopError):
    """Nothing is ready, no timer is armed, and the awaited work is unfinished: the run
    can never make progress. The message lists every pending task and where it waits."""


class Runaway(VirtualLoopError):
    """Too many steps ran without virtual time moving (a busy loop of `sleep(0)`, a
    callback that reschedules itself for ever)."""


class ScheduleDivergence(VirtualLoopError):
    """A replayed run differs from its recording: the message names the first step."""
