"""The per-key storm breaker of a node.

A key is (sender, target, type, payload identity), or the first three without an
identity. A key's window opens at its first post and lasts `window_ms`; within it
the first `threshold` posts pass and the next trips the key, which is then dropped
for `cooldown_ms`. At most `max_keys` keys are tracked; a fresh one evicts the key
seen least recently.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass

BreakerKey = tuple[str | None, ...]


@dataclass
class _Window:
    start_ms: int
    count: int
    tripped_until_ms: int | None = None


class StormBreaker:
    def __init__(self, threshold: int, window_ms: int, cooldown_ms: int, max_keys: int, *,
                 bugs: Iterable[str] = ()) -> None:
        self.bugs = frozenset(bugs)
        self.threshold = threshold
        self.window_ms = window_ms
        self.cooldown_ms = cooldown_ms
        self.max_keys = max_keys
        self.trips = 0
        self._keys: OrderedDict[BreakerKey, _Window] = OrderedDict()

    def admit(self, key: BreakerKey, now_ms: int) -> tuple[bool, bool]:
        """(admitted, tripped by this post)."""
        window = self._keys.get(key)
        if window is None:
            if len(self._keys) >= self.max_keys:
                self._keys.popitem(last=False)
            self._keys[key] = _Window(now_ms, 1)
            return True, False
        self._keys.move_to_end(key)
        if window.tripped_until_ms is not None:
            if now_ms < window.tripped_until_ms:
                return False, False
            window.tripped_until_ms = None
            window.start_ms, window.count = now_ms, 1
            return True, False
        if now_ms - window.start_ms >= self.window_ms:
            window.start_ms, window.count = now_ms, 1
            return True, False
        if window.count < self.threshold:
            window.count += 1
            return True, False
        tripped_at = window.start_ms if "b04" in self.bugs else now_ms
        window.tripped_until_ms = tripped_at + self.cooldown_ms
        self.trips += 1
        return False, True


def breaker_key(sender: str, target: str, type_name: str, identity: str | None) -> BreakerKey:
    if identity is None:
        return (sender, target, type_name)
    return (sender, target, type_name, identity)
