"""Helpers of the network tests: refusing real sockets, and choosers that answer by what a
verdict is about."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest


class RealSocket(AssertionError):
    """Code under a virtual network made a real socket."""


@contextmanager
def no_real_sockets() -> Iterator[None]:
    """Every way to make a real socket raises `RealSocket` in this block."""
    def refuse(*args: object, **kwargs: object) -> None:
        raise RealSocket(f"a real socket was made: socket{args!r}")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(socket, "socket", refuse)
        patch.setattr(socket, "socketpair", refuse)
        patch.setattr(socket, "create_connection", refuse)
        patch.setattr(socket, "create_server", refuse)
        yield


class Scripted:
    """A chooser answering each verdict with `pick(options, why)`, and every other choice
    with 0 (FIFO); the verdicts it was asked, in order, in `asked`."""

    def __init__(self, pick: Callable[[int, str], int]) -> None:
        self._pick = pick
        self.asked: list[str] = []

    def choose(self, options: int, why: str) -> int:
        if not why.startswith("verdict"):
            return 0
        self.asked.append(why)
        return self._pick(options, why)


def nth_verdict_on(about: str, picks: dict[int, int]) -> Scripted:
    """A chooser giving the n-th verdict whose `why` mentions `about` (counted from 0)
    the option `picks[n]`, every other one 0."""
    seen = [0]

    def pick(options: int, why: str) -> int:
        if about not in why.partition(": ")[2].partition(" after ")[0]:
            return 0
        index = seen[0]
        seen[0] += 1
        return picks.get(index, 0)

    return Scripted(pick)
