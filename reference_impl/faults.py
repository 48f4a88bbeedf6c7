"""Armed faults: which grain calls are rejected, time out or fail with an aggregate, and
which destinations are slow."""

from __future__ import annotations


class FaultBook:
    """Counters per target address; each armed call fault is consumed by one call."""

    def __init__(self) -> None:
        self._reject: dict[str, int] = {}
        self._timeout: dict[str, int] = {}
        self._slow: dict[str, int] = {}
        # Per target, the order (timeout first?) of each armed aggregate, oldest first.
        self._aggregate: dict[str, list[bool]] = {}

    def arm_reject(self, target: str, count: int) -> None:
        self._reject[target] = self._reject.get(target, 0) + count

    def arm_timeout(self, target: str, count: int) -> None:
        self._timeout[target] = self._timeout.get(target, 0) + count

    def arm_aggregate(self, target: str, count: int, timeout_first: bool) -> None:
        self._aggregate.setdefault(target, []).extend([timeout_first] * count)

    def set_slow(self, target: str, duration_ms: int) -> None:
        self._slow[target] = duration_ms

    def take_reject(self, target: str) -> bool:
        return _take(self._reject, target)

    def take_timeout(self, target: str) -> bool:
        return _take(self._timeout, target)

    def take_aggregate(self, target: str) -> bool | None:
        """The next armed aggregate's order (True: the timeout first), or None."""
        armed = self._aggregate.get(target)
        return armed.pop(0) if armed else None

    def slow_ms(self, target: str) -> int:
        return self._slow.get(target, 0)


def _take(counters: dict[str, int], target: str) -> bool:
    left = counters.get(target, 0)
    if left <= 0:
        return False
    counters[target] = left - 1
    return True
