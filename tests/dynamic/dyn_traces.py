"""Hand-built traces for the checker tests: events appended in order, at a settable time."""

from __future__ import annotations

from typing import Any

from invariants.trace import EventKind, MessageClass, TraceEvent

K = EventKind
C = MessageClass


class Trace:
    def __init__(self) -> None:
        self.events: list[TraceEvent] = []
        self.t = 0

    def at(self, ms: int) -> Trace:
        self.t = ms
        return self

    def add(self, kind: EventKind, **fields: Any) -> TraceEvent:
        event = TraceEvent(len(self.events), self.t, kind, **fields)
        self.events.append(event)
        return event
