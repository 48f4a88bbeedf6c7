"""INV6's exact windows: each key's window opens at its first counted post.

INV6's other rules hold any tumbling-window breaker to an upper bound (the window plus the
cooldown), whatever the windows' alignment. A mesh that declares windows opened by a key's
first post (`breaker_windows = "first_post"`, the reference's, TinyMesh's and AioMesh's
breaker) can be held exactly: a key's window opens at its first user post, lasts
`breaker_window_ms`, and the next window opens at the key's first post at or after its end;
within a window the first `breaker_threshold` posts are admitted and the next one trips.
A window one millisecond too long drops a legitimate post; one too short lets a storm
through.

Only a key's windows before its first trip are judged: after a trip, where the next window
opens is the mesh's own choice (at the cooldown's end, or at the next post). A key is no
longer judged once one of its posts was gated or rejected (a breaker may count those or
not), nor once its hub saw more keys than `breaker_max_keys` (an evicted key starts
afresh in the mesh).
"""

from __future__ import annotations

from dataclasses import dataclass

from invariants.checks.params import CheckParams
from invariants.trace import EventKind, TraceEvent

WINDOWS = "windows opened by a key's first post"

Key = tuple[str | None, tuple[str | None, str | None, str | None, str | None]]

_ENQUEUED, _DROPPED, _TRIPPED, _GATED, _REJECTED = (
    EventKind.ENQUEUED, EventKind.DROPPED, EventKind.BREAKER_TRIPPED, EventKind.GATED,
    EventKind.REJECTED,
)


@dataclass(slots=True)
class _Window:
    start: int
    count: int


@dataclass(frozen=True, slots=True)
class _Intake:
    """A counted post waiting for its outcome at its hub: its place in its key's window."""

    delivery_id: str | None
    key: Key
    window: _Window
    position: int


class KeyWindows:
    """Each key's current window, and the verdict on each counted post's outcome."""

    def __init__(self, params: CheckParams) -> None:
        self._params = params
        self._on = params.breaker_windows == "first_post"
        self._windows: dict[Key, _Window] = {}
        self._done: set[Key] = set()  # tripped, gated, rejected or evictable: not judged
        self._keys_at: dict[str | None, int] = {}  # hub -> distinct keys it counted
        self._full: set[str | None] = set()  # hubs past breaker_max_keys
        self._intake: dict[str | None, _Intake] = {}  # hub -> its latest counted post

    def forget_hub(self, hub: str | None) -> None:
        """`hub` was made afresh: its keys' windows start again."""
        self._windows = {key: w for key, w in self._windows.items() if key[0] != hub}
        self._done = {key for key in self._done if key[0] != hub}
        self._keys_at.pop(hub, None)
        self._full.discard(hub)
        self._intake.pop(hub, None)

    def posted(self, event: TraceEvent, key: Key, *, counted: bool) -> None:
        """A post of `key` at its hub (`event` is its POSTED there); `counted`: user
        traffic, which every breaker counts."""
        hub = key[0]
        self._intake.pop(hub, None)
        if not counted or not self._on or key in self._done or hub in self._full:
            return
        now = event.time_ms
        window = self._windows.get(key)
        if window is None:
            seen = self._keys_at[hub] = self._keys_at.get(hub, 0) + 1
            if seen > self._params.breaker_max_keys:
                self._full.add(hub)  # the mesh may evict any key now: stop judging here
                return
            window = self._windows[key] = _Window(now, 0)
        elif now >= window.start + self._params.breaker_window_ms:
            window.start, window.count = now, 0
        window.count += 1
        self._intake[hub] = _Intake(event.delivery_id, key, window, window.count)

    def outcome(self, event: TraceEvent) -> tuple[bool, str | None]:
        """The outcome of the latest counted post at `event.hub`: (judged exactly, the
        violation's text or None)."""
        intake = self._intake.get(event.hub)
        if intake is None or intake.delivery_id != event.delivery_id or event.hub in self._full:
            return False, None
        kind = event.kind
        if kind is _GATED or kind is _REJECTED:
            self._retire(intake)
            return False, None
        threshold = self._params.threshold_at(event.hub)
        over = intake.position > threshold
        if kind is _ENQUEUED:
            del self._intake[event.hub]
            if not over:
                return False, None
            self._retire(intake)
            return True, (f"breaker admitted {self._what(intake)}, post {intake.position} "
                          f"of its key in its window, over the threshold {threshold}: "
                          f"{self._where(intake)}")
        if kind is not _DROPPED and kind is not _TRIPPED:
            return False, None
        self._retire(intake)
        if over:
            return True, None
        verb = "dropped" if kind is _DROPPED else "tripped on"
        return True, (f"breaker {verb} {self._what(intake)}, only post {intake.position} of "
                      f"its key in its window (threshold {threshold}): {self._where(intake)}")

    @staticmethod
    def _what(intake: _Intake) -> str:
        sender, target, message_type, identity = intake.key[1]
        return (f"{intake.delivery_id} ({sender}->{target} {message_type} identity "
                f"{identity})")

    def _where(self, intake: _Intake) -> str:
        start, width = intake.window.start, self._params.breaker_window_ms
        return (f"its window opened at {start} ms, with the key's first post since its last "
                f"window closed, and closes at {start + width} ms (breaker_window_ms {width}, "
                "breaker_windows first_post)")

    def _retire(self, intake: _Intake) -> None:
        self.retire_key(intake.key)
        self._intake.pop(intake.key[0], None)

    def retire_key(self, key: Key) -> None:
        """`key` is judged no more: it tripped (whether or not its post was traced: a
        trace may lose it), or a post of it was gated or rejected."""
        self._done.add(key)
        self._windows.pop(key, None)
