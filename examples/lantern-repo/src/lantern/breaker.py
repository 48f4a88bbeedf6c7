"""The per-key storm breaker: (sender, target, type, identity), windows opened by a key's first post."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Hashable

OK = "ok"
TRIP = "trip"
DROP = "drop"


class _Key:
    __slots__ = ("count", "start_us", "until_us")

    def __init__(self, now_us: int) -> None:
        self.start_us = now_us
        self.count = 0
        self.until_us: int | None = None


class Breaker:
    def __init__(self, threshold: int, window_ms: int, cooldown_ms: int, max_keys: int, *,
                 timed_windows: bool = False) -> None:
        self.timed_windows = timed_windows  # close each window with a timer, not by comparing times
        self.threshold = threshold
        self.window_us = window_ms * 1000
        self.cooldown_us = cooldown_ms * 1000
        self.max_keys = max_keys
        self._keys: OrderedDict[Hashable, _Key] = OrderedDict()

    def admit(self, key: Hashable, now_us: int) -> str:
        state = self._keys.get(key)
        if state is None:
            if len(self._keys) >= self.max_keys:
                self._keys.popitem(last=False)  # evict the key idle the longest
            state = self._keys[key] = _Key(now_us)
        else:
            self._keys.move_to_end(key)
        if state.until_us is not None:
            if now_us < state.until_us:
                return DROP
            state.until_us = None
            state.start_us, state.count = now_us, 0
        if self.timed_windows:
            if state.count == 0:
                asyncio.get_running_loop().call_later(self.window_us / 1e6, self._close_window, state)
        elif now_us >= state.start_us + self.window_us:
            state.start_us, state.count = now_us, 0
        if state.count == 0:
            state.start_us = now_us
        state.count += 1
        if state.count > self.threshold:
            state.until_us = now_us + self.cooldown_us
            return TRIP
        return OK

    @staticmethod
    def _close_window(state: _Key) -> None:
        if state.until_us is None:
            state.count = 0
