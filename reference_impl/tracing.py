"""Trace recording: every step of the mesh as an `invariants.trace.TraceEvent`.

Steps are recorded as plain values and turned into `TraceEvent`s only when the trace is
read, so a flood costs little; recording can be switched off entirely (the benchmark
measures both). Records lie end to end in one flat list, each led by its tag: no object
per record for the allocator or the cyclic garbage collector to handle. The values are
strings, ints, bools, None, dicts of those (which the collector does not track) and enum
members (each exists once, whatever the length of the trace). One intake is one record:
it reads back as POSTED, the breaker trip if there was one, and the intake's outcome.

The hub's enqueue and turn, run for every delivery, append their records to `records`
themselves (a call fewer each); `enqueued` and `handled` below write the same layouts
and are what the tests pinning the layouts use.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Protocol

from invariants.trace import EventKind, MessageClass, TraceEvent
from reference_impl.envelope import Delivery
from reference_impl.messages import ErrorType
from reference_impl.trace_build import build_event

KINDS = MappingProxyType({kind.value: kind for kind in EventKind})
CLASSES = MappingProxyType({cls.value: cls for cls in MessageClass})
_IGNORED = ErrorType.IGNORED.value
_POSTED, _HANDLED, _ENQUEUED, _TRIPPED = (
    EventKind.POSTED, EventKind.HANDLED, EventKind.ENQUEUED, EventKind.BREAKER_TRIPPED
)
_IGNORED_OUTCOMES = frozenset({EventKind.DROPPED, EventKind.SHED})

# Record tags and the number of values after each tag.
_TAG_EMIT, _TAG_INTAKE, TAG_HANDLED, _TAG_LEG_STARTED, _TAG_LEG_ENDED, TAG_ENQUEUED = (
    0, 1, 2, 3, 4, 5
)
_EMIT_LEN, _INTAKE_LEN, _HANDLED_LEN, _LEG_STARTED_LEN, _LEG_ENDED_LEN, _ENQUEUED_LEN = (
    3, 14, 4, 10, 6, 11
)
_LEG_STARTED, _LEG_ENDED = EventKind.LEG_STARTED, EventKind.LEG_ENDED


class Clock(Protocol):
    now: int


class TraceRecorder:
    """Append-only event log stamped with the virtual clock."""

    def __init__(self, clock: Clock, *, enabled: bool = True) -> None:
        self._clock = clock
        self.enabled = enabled
        self._raw: list[Any] = []  # flat records: tag, then its values
        # The same list, for the hub to append its records to; None while recording is off
        # (`enabled` is set once, when the recorder is made).
        self.records: list[Any] | None = self._raw if enabled else None
        self._read = 0  # position in _raw up to which records are events already
        self._events: list[TraceEvent] = []

    def emit(self, kind: EventKind, **fields: Any) -> None:
        if self.enabled:
            # Enums by their value: a dict holding only plain values is not tracked by the
            # collector.
            message_class = fields.get("message_class")
            if message_class is not None:
                fields["message_class"] = message_class._value_
            self._raw += (_TAG_EMIT, self._clock.now, kind._value_, fields)

    def intake(self, hub: str, d: Delivery, outcome: EventKind, depth: int,
               watermark: int | None = None, tripped: bool = False) -> None:
        """One offer to a hub's intake and its outcome. `depth` is the queue depth at
        intake; ENQUEUED reads back with the depth after it."""
        if self.enabled:
            self._raw += (
                _TAG_INTAKE, self._clock.now, hub, d.id, d.sender, d.target, d.message_type,
                d.message_class, d.diagnostic_key, d.packaged, d.subscription_id, outcome,
                depth, watermark, tripped,
            )

    def enqueued(self, hub: str, d: Delivery, depth: int) -> None:
        """An intake whose outcome is ENQUEUED, the common one: its own shorter record
        (no outcome, watermark or trip to store), read back as `intake` would be."""
        if self.enabled:
            self._raw += (
                TAG_ENQUEUED, self._clock.now, hub, d.id, d.sender, d.target, d.message_type,
                d.message_class, d.diagnostic_key, d.packaged, d.subscription_id, depth,
            )

    def handled(self, hub: str, delivery_id: str, message_type: str) -> None:
        if self.enabled:
            self._raw += (TAG_HANDLED, self._clock.now, hub, delivery_id, message_type)

    def leg_started(self, leg_id: str, leg_kind: str, delivery_id: str, d: Delivery,
                    depth: int) -> None:
        """LEG_STARTED for a leg carrying `d`; `depth` is the gauge after it. A record of its
        own rather than `emit`: no keyword dict per leg, and read back by position."""
        if self.enabled:
            self._raw += (
                _TAG_LEG_STARTED, self._clock.now, leg_id, leg_kind, delivery_id, depth, d.sender,
                d.target, d.message_type, d.message_class, d.packaged,
            )

    def leg_ended(self, leg_id: str, leg_kind: str, delivery_id: str, depth: int,
                  reason: str) -> None:
        if self.enabled:
            self._raw += (
                _TAG_LEG_ENDED, self._clock.now, leg_id, leg_kind, delivery_id, depth, reason,
            )

    def events(self) -> Sequence[TraceEvent]:
        """Every event so far, in order (materialised incrementally)."""
        raw, events = self._raw, self._events
        at, end = self._read, len(raw)
        while at < end:
            expand, length = _READERS[raw[at]]
            expand(raw, at + 1, events)
            at += 1 + length
        self._read = at
        return events


# The hot records are read back with `build_event` (every field by position, in
# `TraceEvent`'s order: seq, time_ms, kind, hub, delivery_id, sender, target, message_type,
# message_class, diagnostic_key, answers, error, timed_out, attempt, leg_id, leg_kind,
# subscription_id, stage, graceful, reason, depth, packaged, watermark), much cheaper than
# the dataclass's own constructor when a long trace is read.

def _expand_emit(raw: list[Any], at: int, events: list[TraceEvent]) -> None:
    time_ms, kind_value, fields = raw[at], raw[at + 1], raw[at + 2]
    message_class = fields.get("message_class")
    if message_class is not None:
        fields = {**fields, "message_class": CLASSES[message_class]}
    events.append(TraceEvent(len(events), time_ms, KINDS[kind_value], **fields))


def _expand_handled(raw: list[Any], at: int, events: list[TraceEvent]) -> None:
    time_ms, hub, delivery_id, message_type = raw[at:at + _HANDLED_LEN]
    events.append(build_event(
        len(events), time_ms, _HANDLED, hub, delivery_id, None, None, message_type, None,
        None, None, None, None, None, None, None, None, None, None, None, None, None, None,
    ))


def _expand_intake(raw: list[Any], at: int, events: list[TraceEvent]) -> None:
    """POSTED, the trip if there was one, and the outcome."""
    (time_ms, hub, delivery_id, sender, target, message_type, message_class, key, packaged,
     subscription_id, outcome, depth, watermark, tripped) = raw[at:at + _INTAKE_LEN]
    append = events.append
    append(build_event(
        len(events), time_ms, _POSTED, hub, delivery_id, sender, target, message_type,
        message_class, key, None, None, None, None, None, None, subscription_id, None,
        None, None, None, packaged, None,
    ))
    if tripped:
        append(build_event(
            len(events), time_ms, _TRIPPED, hub, delivery_id, sender, target, message_type,
            None, key, None, None, None, None, None, None, None, None, None, None, None, None,
            None,
        ))
    if outcome is _ENQUEUED:
        append(build_event(
            len(events), time_ms, outcome, hub, delivery_id, None, None, None, None, None,
            None, None, None, None, None, None, None, None, None, None, depth + 1, None, None,
        ))
    elif outcome in _IGNORED_OUTCOMES:
        append(build_event(
            len(events), time_ms, outcome, hub, delivery_id, None, None, None, None, None,
            None, _IGNORED, None, None, None, None, None, None, None, None, depth, None,
            watermark,
        ))
    else:
        append(build_event(
            len(events), time_ms, outcome, hub, delivery_id, None, None, None, None, None,
            None, None, None, None, None, None, None, None, None, None, None, None, None,
        ))


def _expand_enqueued(raw: list[Any], at: int, events: list[TraceEvent]) -> None:
    """POSTED, then ENQUEUED with the depth after it."""
    (time_ms, hub, delivery_id, sender, target, message_type, message_class, key, packaged,
     subscription_id, depth) = raw[at:at + _ENQUEUED_LEN]
    append = events.append
    append(build_event(
        len(events), time_ms, _POSTED, hub, delivery_id, sender, target, message_type,
        message_class, key, None, None, None, None, None, None, subscription_id, None,
        None, None, None, packaged, None,
    ))
    append(build_event(
        len(events), time_ms, _ENQUEUED, hub, delivery_id, None, None, None, None, None,
        None, None, None, None, None, None, None, None, None, None, depth + 1, None, None,
    ))


def _expand_leg_started(raw: list[Any], at: int, events: list[TraceEvent]) -> None:
    (time_ms, leg_id, leg_kind, delivery_id, depth, sender, target, message_type,
     message_class, packaged) = raw[at:at + _LEG_STARTED_LEN]
    events.append(build_event(
        len(events), time_ms, _LEG_STARTED, None, delivery_id, sender, target, message_type,
        message_class, None, None, None, None, None, leg_id, leg_kind, None, None, None,
        None, depth, packaged, None,
    ))


def _expand_leg_ended(raw: list[Any], at: int, events: list[TraceEvent]) -> None:
    time_ms, leg_id, leg_kind, delivery_id, depth, reason = raw[at:at + _LEG_ENDED_LEN]
    events.append(build_event(
        len(events), time_ms, _LEG_ENDED, None, delivery_id, None, None, None, None, None,
        None, None, None, None, leg_id, leg_kind, None, None, None, reason, depth, None, None,
    ))


# Per record tag: the function that reads a record back, and its length after the tag.
_Reader = Callable[[list[Any], int, list[TraceEvent]], None]
_READERS: Mapping[int, tuple[_Reader, int]] = MappingProxyType({
    _TAG_EMIT: (_expand_emit, _EMIT_LEN),
    _TAG_INTAKE: (_expand_intake, _INTAKE_LEN),
    TAG_HANDLED: (_expand_handled, _HANDLED_LEN),
    _TAG_LEG_STARTED: (_expand_leg_started, _LEG_STARTED_LEN),
    _TAG_LEG_ENDED: (_expand_leg_ended, _LEG_ENDED_LEN),
    TAG_ENQUEUED: (_expand_enqueued, _ENQUEUED_LEN),
})
