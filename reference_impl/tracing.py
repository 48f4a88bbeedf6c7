"""Trace recording: every step of the mesh as an `invariants.trace.TraceEvent`.

Events are recorded as cheap tuples and turned into `TraceEvent`s only when read, so a
flood costs little; recording can be switched off entirely (the benchmark measures both).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from invariants.trace import EventKind, TraceEvent


class TraceRecorder:
    """Append-only event log stamped with the virtual clock."""

    def __init__(self, clock: Callable[[], int], *, enabled: bool = True) -> None:
        self._clock = clock
        self.enabled = enabled
        self._raw: list[tuple[int, EventKind, dict[str, Any]]] = []
        self._events: list[TraceEvent] = []

    def emit(self, kind: EventKind, **fields: Any) -> None:
        if self.enabled:
            self._raw.append((self._clock(), kind, fields))

    def events(self) -> Sequence[TraceEvent]:
        """Every event so far, in order (materialised incrementally)."""
        events, raw = self._events, self._raw
        for seq in range(len(events), len(raw)):
            time_ms, kind, fields = raw[seq]
            events.append(TraceEvent(seq, time_ms, kind, **fields))
        return events

    def __len__(self) -> int:
        return len(self._raw)
