"""The per-key storm breaker: one sender hammering one target about one thing.

A key is (sender, target, message type, payload identity): one sender talking to one
target about many different things is many keys, never a storm. Tumbling windows; the
message past the threshold trips its key, which is dropped for the cooldown. Lifecycle,
ignorable and failure traffic is never counted (the watermark sheds what may be shed).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

from aiomesh.envelope import Kind

if TYPE_CHECKING:
    from aiomesh.mesh import Mesh

Key = tuple[str, str, str, str | None]

UNCOUNTED = frozenset({Kind.LIFECYCLE, Kind.IGNORABLE, Kind.FAILURE})
THRESHOLD = 1_000  # messages per key per window; the next one trips
WINDOW_MS = 1_000
COOLDOWN_MS = 2_000
MAX_KEYS = 10_000


@dataclass
class _Window:
    start: int
    count: int = 0
    open_until: int = -1  # tripped: dropping until then
    reopen: asyncio.Task[None] | None = None


class Breaker:
    def __init__(self, mesh: Mesh, threshold: int = THRESHOLD) -> None:
        self.mesh = mesh
        self.threshold = threshold
        self._windows: dict[Key, _Window] = {}  # least recently seen first
        self.trips = 0

    def key(self, sender: str, target: str, type_name: str, identity: str | None) -> Key:
        if "key-without-identity" in self.mesh.bugs:
            return (sender, target, type_name, None)
        return (sender, target, type_name, identity)

    def close(self) -> None:
        for window in self._windows.values():
            if window.reopen is not None:
                window.reopen.cancel()

    def admit(self, key: Key, kind: Kind) -> str:
        """`pass`, `trip` (this message tripped its key: drop it) or `drop`."""
        if kind in UNCOUNTED:
            return "pass"
        now = self.mesh.now_ms()
        window = self._windows.pop(key, None)
        if window is None or (now >= window.start + WINDOW_MS
                              and not self._tripped(window, now)):
            window = _Window(now)
        self._windows[key] = window
        if len(self._windows) > MAX_KEYS:
            idlest = next(iter(self._windows))
            self._windows.pop(idlest)
        if self._tripped(window, now):
            return "drop"
        window.count += 1
        if window.count > self.threshold:
            self.trips += 1
            window.open_until = now + COOLDOWN_MS
            if "breaker-reopen-timer" in self.mesh.bugs:
                window.reopen = self.mesh.loop.create_task(self._reopen(window),
                                                           name=f"reopen {key}")
            return "trip"
        return "pass"

    def _tripped(self, window: _Window, now: int) -> bool:
        if "breaker-reopen-timer" in self.mesh.bugs:
            return window.reopen is not None  # dropping until the timer reopens the key
        return now < window.open_until

    async def _reopen(self, window: _Window) -> None:
        await asyncio.sleep(self.mesh.seconds(COOLDOWN_MS))
        window.reopen = None
