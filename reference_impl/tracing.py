"""Trace recording: every step of the mesh as an `invariants.trace.TraceEvent`.

Steps are recorded as cheap tuples and turned into `TraceEvent`s only when the trace is
read, so a flood costs little; recording can be switched off entirely (the benchmark
measures both). Records hold plain strings, ints and bools only, which the cyclic garbage
collector stops tracking, and one intake is one record: it reads back as POSTED, the
breaker trip if there was one, and the intake's outcome.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import MappingProxyType
from typing import Any, Protocol

from invariants.trace import EventKind, MessageClass, TraceEvent
from reference_impl.envelope import Delivery
from reference_impl.messages import ErrorType

KINDS = MappingProxyType({kind.value: kind for kind in EventKind})
CLASSES = MappingProxyType({cls.value: cls for cls in MessageClass})
_IGNORED = ErrorType.IGNORED.value
_INTAKE, _HANDLED = "intake", "handled"


class Clock(Protocol):
    now: int


class TraceRecorder:
    """Append-only event log stamped with the virtual clock."""

    def __init__(self, clock: Clock, *, enabled: bool = True) -> None:
        self._clock = clock
        self.enabled = enabled
        self._raw: list[tuple[Any, ...]] = []
        self._read = 0  # records already turned into events
        self._events: list[TraceEvent] = []

    def emit(self, kind: EventKind, **fields: Any) -> None:
        if self.enabled:
            # Plain values only (enums by their value), so the collector untracks the record.
            message_class = fields.get("message_class")
            if message_class is not None:
                fields["message_class"] = message_class._value_
            self._raw.append((self._clock.now, kind._value_, fields))

    def intake(self, hub: str, d: Delivery, outcome: EventKind, depth: int,
               watermark: int | None = None, tripped: bool = False) -> None:
        """One offer to a hub's intake and its outcome. `depth` is the queue depth at
        intake; ENQUEUED reads back with the depth after it."""
        if self.enabled:
            self._raw.append((
                self._clock.now, _INTAKE, hub, d.id, d.sender, d.target, d.message_type,
                d.message_class._value_, d.diagnostic_key, d.packaged, d.subscription_id,
                outcome._value_, depth, watermark, tripped,
            ))

    def handled(self, hub: str, delivery_id: str, message_type: str) -> None:
        if self.enabled:
            self._raw.append((self._clock.now, _HANDLED, hub, delivery_id, message_type))

    def events(self) -> Sequence[TraceEvent]:
        """Every event so far, in order (materialised incrementally)."""
        raw, events = self._raw, self._events
        for index in range(self._read, len(raw)):
            _expand(raw[index], events)
        self._read = len(raw)
        return events


def _expand(r: tuple[Any, ...], events: list[TraceEvent]) -> None:
    """Append the event(s) one record stands for, numbered by their position."""
    time_ms, tag = r[0], r[1]
    if len(r) == 3:
        fields = r[2]
        message_class = fields.get("message_class")
        if message_class is not None:
            fields = {**fields, "message_class": CLASSES[message_class]}
        events.append(TraceEvent(len(events), time_ms, KINDS[tag], **fields))
    elif tag == _HANDLED:
        events.append(TraceEvent(len(events), time_ms, EventKind.HANDLED, hub=r[2],
                                 delivery_id=r[3], message_type=r[4]))
    else:
        _expand_intake(r, events)


def _expand_intake(r: tuple[Any, ...], events: list[TraceEvent]) -> None:
    (time_ms, _, hub, delivery_id, sender, target, message_type, class_value, key, packaged,
     subscription_id, outcome_value, depth, watermark, tripped) = r
    message_class = CLASSES[class_value]
    events.append(TraceEvent(
        len(events), time_ms, EventKind.POSTED, hub=hub, delivery_id=delivery_id,
        sender=sender, target=target, message_type=message_type, message_class=message_class,
        diagnostic_key=key, packaged=packaged, subscription_id=subscription_id,
    ))
    if tripped:
        events.append(TraceEvent(
            len(events), time_ms, EventKind.BREAKER_TRIPPED, hub=hub, delivery_id=delivery_id,
            diagnostic_key=key, message_type=message_type, sender=sender, target=target,
        ))
    outcome = KINDS[outcome_value]
    if outcome is EventKind.ENQUEUED:
        event = TraceEvent(len(events), time_ms, outcome, hub=hub, delivery_id=delivery_id,
                           depth=depth + 1)
    elif outcome in (EventKind.DROPPED, EventKind.SHED):
        event = TraceEvent(len(events), time_ms, outcome, hub=hub, delivery_id=delivery_id,
                           depth=depth, watermark=watermark, error=_IGNORED)
    else:
        event = TraceEvent(len(events), time_ms, outcome, hub=hub, delivery_id=delivery_id)
    events.append(event)
