"""The per-key storm breaker: one sender hammering one target about one thing.

A key is (sender, target, subject, topic): the topic is what the letter is about, so one
sender talking to one target about many different things is many keys, never a storm.
"""

from __future__ import annotations

from dataclasses import dataclass

from tinymesh.letters import Kind

Key = tuple[str, str, str, str | None]

# Never counted: quiet traffic is spilled by the watermark, not tripped here.
UNCOUNTED = frozenset({Kind.CONTROL, Kind.CHATTER, Kind.BOUNCE})

THRESHOLD = 1_000  # letters per key per window; the next one trips
WINDOW_MS = 500
COOLDOWN_MS = 1_000
MAX_KEYS = 4_096


@dataclass
class _Window:
    start: int
    count: int = 0
    open_until: int = -1  # tripped: dropping until then


def breaker_key(sender: str, target: str, subject: str, topic: str | None) -> Key:
    return (sender, target, subject, topic)


class StormBreaker:
    def __init__(self, threshold: int = THRESHOLD, window_ms: int = WINDOW_MS,
                 cooldown_ms: int = COOLDOWN_MS, max_keys: int = MAX_KEYS) -> None:
        self.threshold = threshold
        self.window_ms = window_ms
        self.cooldown_ms = cooldown_ms
        self.max_keys = max_keys
        self._windows: dict[Key, _Window] = {}  # least recently seen first
        self.trips = 0

    def admit(self, key: Key, kind: Kind, now: int) -> str:
        """`pass`, `trip` (this letter tripped the key: drop it) or `mute` (drop it)."""
        if kind in UNCOUNTED:
            return "pass"
        window = self._windows.pop(key, None)
        if window is None or (now >= window.start + self.window_ms and now >= window.open_until):
            window = _Window(now)
        self._windows[key] = window
        if len(self._windows) > self.max_keys:
            del self._windows[next(iter(self._windows))]  # the idlest key
        if now < window.open_until:
            return "mute"
        window.count += 1
        if window.count > self.threshold:
            window.open_until = now + self.cooldown_ms
            self.trips += 1
            return "trip"
        return "pass"
