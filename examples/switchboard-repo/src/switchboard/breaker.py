"""The per-key storm breaker of one inbox.

Key: (sender, target, kind, topic), or the first three without a topic. A key's window
opens at its first post and lasts `window_ms`; the (threshold + 1)th post in a window trips
the key, which is then dropped for `cooldown_ms`. At most `max_keys` keys are tracked; the
one seen least recently is forgotten first.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

Key = tuple[str, ...]
Later = Callable[..., Any]  # (delay_ms, callback, *args): the switchboard's timer


class Verdict(Enum):
    ADMIT = "admit"
    TRIP = "trip"   # this post tripped the key: dropped
    DROP = "drop"   # the key is cooling down: dropped


@dataclass(slots=True)
class _Window:
    start: int
    count: int
    cool_until: int  # -1: not tripped


def breaker_key(sender: str, target: str, kind: str, topic: str | None) -> Key:
    if topic is None:
        return (sender, target, kind)
    return (sender, target, kind, topic)


class StormBreaker:
    def __init__(self, threshold: int, window_ms: int, cooldown_ms: int, max_keys: int, *,
                 bugs: frozenset[str] = frozenset(), later: Later | None = None) -> None:
        self.threshold = threshold
        self.window_ms = window_ms
        self.cooldown_ms = cooldown_ms
        self.max_keys = max_keys
        self.trips = 0
        self.bugs = bugs
        self._later = later
        self._windows: OrderedDict[Key, _Window] = OrderedDict()

    def admit(self, key: Key, now_ms: int) -> Verdict:
        window = self._windows.get(key)
        if window is None:
            if len(self._windows) >= self.max_keys:
                self._windows.popitem(last=False)
            window = self._windows[key] = _Window(now_ms, 0, -1)
        else:
            self._windows.move_to_end(key)
        if window.cool_until >= 0:
            if now_ms < window.cool_until:
                return Verdict.DROP
            window.cool_until, window.start, window.count = -1, now_ms, 0
        if now_ms - window.start >= self.window_ms:
            window.start, window.count = now_ms, 0
        window.count += 1
        if "b17" in self.bugs and window.count == 1 and self._later is not None:
            self._later(self.window_ms, self._forget, key, window)
        if window.count > self.threshold:
            window.cool_until = now_ms + self.cooldown_ms
            self.trips += 1
            return Verdict.TRIP
        return Verdict.ADMIT

    def _forget(self, key: Key, window: _Window) -> None:
        """Drop a key whose window has run out and that is not cooling down."""
        if self._windows.get(key) is window and window.cool_until < 0:
            del self._windows[key]
