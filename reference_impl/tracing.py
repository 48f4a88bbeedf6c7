"""Trace recording: every step of the mesh as an `invariants.trace.TraceEvent`.

Events are recorded as cheap tuples and turned into `TraceEvent`s only when read, so a
flood costs little; recording can be switched off entirely (the benchmark measures both).
The hot intake and turn events are recorded as tuples of plain strings and ints: the
cyclic garbage collector stops tracking those, so a long trace costs it nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import MappingProxyType
from typing import Any, Protocol

from invariants.trace import EventKind, MessageClass, TraceEvent
from reference_impl.envelope import Delivery
from reference_impl.messages import ErrorType

KINDS = MappingProxyType({kind.value: kind for kind in EventKind})
_IGNORED = ErrorType.IGNORED.value
_POSTED, _ENQUEUED, _HANDLED = "posted", "enqueued", "handled"


class Clock(Protocol):
    now: int


class TraceRecorder:
    """Append-only event log stamped with the virtual clock."""

    def __init__(self, clock: Clock, *, enabled: bool = True) -> None:
        self._clock = clock
        self.enabled = enabled
        self._raw: list[tuple[Any, ...]] = []
        self._events: list[TraceEvent] = []

    def emit(self, kind: EventKind, **fields: Any) -> None:
        if self.enabled:
            self._raw.append((self._clock.now, kind, fields))

    def posted(self, hub: str, d: Delivery) -> None:
        if self.enabled:
            message = d.message
            self._raw.append((
                self._clock.now, _POSTED, hub, d.id, d.sender, d.target, message.type_name,
                message.message_class._value_, d.diagnostic_key, d.packaged,
                d.subscription_id,
            ))

    def enqueued(self, hub: str, delivery_id: str, depth: int) -> None:
        if self.enabled:
            self._raw.append((self._clock.now, _ENQUEUED, hub, delivery_id, depth))

    def handled(self, hub: str, delivery_id: str, message_type: str) -> None:
        if self.enabled:
            self._raw.append((self._clock.now, _HANDLED, hub, delivery_id, message_type))

    def refused(self, kind: EventKind, hub: str, delivery_id: str, depth: int,
                watermark: int | None = None) -> None:
        """An intake outcome other than ENQUEUED (REJECTED, GATED, DROPPED, SHED)."""
        if self.enabled:
            self._raw.append((self._clock.now, kind.value, hub, delivery_id, depth, watermark))

    def events(self) -> Sequence[TraceEvent]:
        """Every event so far, in order (materialised incrementally)."""
        events, raw = self._events, self._raw
        for seq in range(len(events), len(raw)):
            events.append(_materialise(seq, raw[seq]))
        return events

    def __len__(self) -> int:
        return len(self._raw)


def _materialise(seq: int, r: tuple[Any, ...]) -> TraceEvent:
    time_ms, tag = r[0], r[1]
    if len(r) == 3:
        return TraceEvent(seq, time_ms, tag, **r[2])
    kind = KINDS[tag]
    if kind is EventKind.POSTED:
        return TraceEvent(
            seq, time_ms, kind, hub=r[2], delivery_id=r[3], sender=r[4], target=r[5],
            message_type=r[6], message_class=MessageClass(r[7]), diagnostic_key=r[8],
            packaged=r[9], subscription_id=r[10],
        )
    if kind is EventKind.ENQUEUED:
        return TraceEvent(seq, time_ms, kind, hub=r[2], delivery_id=r[3], depth=r[4])
    if kind is EventKind.HANDLED:
        return TraceEvent(seq, time_ms, kind, hub=r[2], delivery_id=r[3], message_type=r[4])
    if kind in (EventKind.DROPPED, EventKind.SHED):
        return TraceEvent(seq, time_ms, kind, hub=r[2], delivery_id=r[3], depth=r[4],
                          watermark=r[5], error=_IGNORED)
    return TraceEvent(seq, time_ms, kind, hub=r[2], delivery_id=r[3])
