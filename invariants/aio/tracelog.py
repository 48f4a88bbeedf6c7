"""The trace a kit adapter keeps: events stamped with their seq and the loop's virtual time."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypedDict, Unpack

from invariants.trace import EventKind, MessageClass, Scalar, TraceEvent, custom_event


class TraceFields(TypedDict, total=False):
    """Every `TraceEvent` field but the three the log stamps (`seq`, `time_ms`, `kind`)."""

    hub: str
    delivery_id: str
    sender: str
    target: str
    message_type: str
    message_class: MessageClass
    diagnostic_key: str
    answers: str
    error: str
    timed_out: bool
    attempt: int
    leg_id: str
    leg_kind: str
    subscription_id: str
    stage: int
    graceful: bool
    reason: str
    depth: int
    packaged: bool
    watermark: int


class TraceLog:
    """Appends events in order; `seq` is the position, `time_ms` read off `clock`."""

    def __init__(self, clock: Callable[[], int]) -> None:
        self.events: list[TraceEvent] = []
        self._clock = clock

    def emit(self, kind: EventKind, **fields: Unpack[TraceFields]) -> TraceEvent:
        message_class = fields.get("message_class")
        if message_class is not None and type(message_class) is not MessageClass:
            # A plain string equals its class's value but is not it: the checkers, which
            # compare classes by identity, would misread the event without a word.
            known = ", ".join(f"MessageClass.{c.name}" for c in MessageClass)
            raise TypeError(f"{kind.value}: message_class must be a MessageClass ({known}), "
                            f"got {message_class!r}")
        event = TraceEvent(seq=len(self.events), time_ms=self._clock(), kind=kind, **fields)
        self.events.append(event)
        return event

    def custom(self, name: str, *, hub: str | None = None, **data: Scalar) -> TraceEvent:
        """One of the mesh's own events (`custom_event`: a bad name or field raises)."""
        event = custom_event(len(self.events), self._clock(), name, hub=hub, **data)
        self.events.append(event)
        return event
