"""Armed faults: which grain calls are rejected or time out, which destinations are slow."""

from __future__ import annotations


class FaultBook:
    """Counters per target address; each armed call fault is consumed by one call."""

    def __init__(self) -> None:
        self._reject: dict[str, int] = {}
        self._timeout: dict[str, int] = {}
        self._slow: dict[str, int] = {}

    def arm_reject(self, target: str, count: int) -> None:
        self._reject[target] = self._reject.get(target, 0) + count

    def arm_timeout(self, target: str, count: int) -> None:
        self._timeout[target] = self._timeout.get(target, 0) + count

    def set_slow(self, target: str, duration_ms: int) -> None:
        self._slow[target] = duration_ms

    def take_reject(self, target: str) -> bool:
        return _take(self._reject, target)

    def take_timeout(self, target: str) -> bool:
        return _take(self._timeout, target)

    def slow_ms(self, target: str) -> int:
        return self._slow.get(target, 0)


def _take(counters: dict[str, int], target: str) -> bool:
    left = counters.get(target, 0)
    if left <= 0:
        return False
    counters[target] = left - 1
    return True
