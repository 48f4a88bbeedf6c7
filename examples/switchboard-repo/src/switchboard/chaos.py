"""Armed call faults: a fault-injection seam, empty (and so inert) in production.

A refusal is spent by the next call sent to its target; a stall (the callee takes the call
and sits on it past the caller's response timeout, alone or reported to the caller as a
group of a timeout and a refusal) by the next call its target takes, groups before bare
stalls.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Stall:
    grouped: bool = False        # the caller sees a group of a timeout and a refusal
    timeout_first: bool = True   # the group's order


class CallFaults:
    def __init__(self) -> None:
        self._refusals: dict[str, int] = {}
        self._stalls: dict[str, int] = {}
        self._groups: dict[str, deque[bool]] = {}

    def refuse_next(self, target: str, count: int) -> None:
        self._refusals[target] = self._refusals.get(target, 0) + count

    def stall_next(self, target: str, count: int) -> None:
        self._stalls[target] = self._stalls.get(target, 0) + count

    def group_next(self, target: str, count: int, *, timeout_first: bool) -> None:
        self._groups.setdefault(target, deque()).extend([timeout_first] * count)

    def take_refusal(self, target: str) -> bool:
        left = self._refusals.get(target, 0)
        if left <= 0:
            return False
        self._refusals[target] = left - 1
        return True

    def take_receipt_fault(self, target: str) -> Stall | None:
        groups = self._groups.get(target)
        if groups:
            return Stall(grouped=True, timeout_first=groups.popleft())
        left = self._stalls.get(target, 0)
        if left > 0:
            self._stalls[target] = left - 1
            return Stall()
        return None
