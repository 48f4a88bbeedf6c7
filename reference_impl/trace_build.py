"""Build `TraceEvent`s fast when a long trace is read.

`TraceEvent` is a frozen, slotted dataclass: its generated `__init__` stores each of its
25 fields through a looked-up `object.__setattr__`, which is what reading a trace of a
flood spends its time on. `build_event` makes the same object (`==`, hash and every field
alike) by storing each field straight through its slot's descriptor, bound once here.
Its parameters are `TraceEvent`'s fields in order; a test pins the two to each other.
"""

from __future__ import annotations

from collections.abc import Callable
from types import MappingProxyType
from typing import Any

from invariants.trace import EventKind, MessageClass, Scalar, TraceEvent

_NEW = object.__new__
_SLOTS = MappingProxyType(vars(TraceEvent))
FIELD_ORDER = (
    "seq", "time_ms", "kind", "hub", "delivery_id", "sender", "target", "message_type",
    "message_class", "diagnostic_key", "answers", "error", "timed_out", "attempt", "leg_id",
    "leg_kind", "subscription_id", "stage", "graceful", "reason", "depth", "packaged",
    "watermark", "custom", "data",
)

# Each slot's descriptor `__set__`, bound once.
_Setter = Callable[[TraceEvent, Any], None]
_SET_SEQ: _Setter = _SLOTS["seq"].__set__
_SET_TIME_MS: _Setter = _SLOTS["time_ms"].__set__
_SET_KIND: _Setter = _SLOTS["kind"].__set__
_SET_HUB: _Setter = _SLOTS["hub"].__set__
_SET_DELIVERY_ID: _Setter = _SLOTS["delivery_id"].__set__
_SET_SENDER: _Setter = _SLOTS["sender"].__set__
_SET_TARGET: _Setter = _SLOTS["target"].__set__
_SET_MESSAGE_TYPE: _Setter = _SLOTS["message_type"].__set__
_SET_MESSAGE_CLASS: _Setter = _SLOTS["message_class"].__set__
_SET_DIAGNOSTIC_KEY: _Setter = _SLOTS["diagnostic_key"].__set__
_SET_ANSWERS: _Setter = _SLOTS["answers"].__set__
_SET_ERROR: _Setter = _SLOTS["error"].__set__
_SET_TIMED_OUT: _Setter = _SLOTS["timed_out"].__set__
_SET_ATTEMPT: _Setter = _SLOTS["attempt"].__set__
_SET_LEG_ID: _Setter = _SLOTS["leg_id"].__set__
_SET_LEG_KIND: _Setter = _SLOTS["leg_kind"].__set__
_SET_SUBSCRIPTION_ID: _Setter = _SLOTS["subscription_id"].__set__
_SET_STAGE: _Setter = _SLOTS["stage"].__set__
_SET_GRACEFUL: _Setter = _SLOTS["graceful"].__set__
_SET_REASON: _Setter = _SLOTS["reason"].__set__
_SET_DEPTH: _Setter = _SLOTS["depth"].__set__
_SET_PACKAGED: _Setter = _SLOTS["packaged"].__set__
_SET_WATERMARK: _Setter = _SLOTS["watermark"].__set__
_SET_CUSTOM: _Setter = _SLOTS["custom"].__set__
_SET_DATA: _Setter = _SLOTS["data"].__set__


def build_event(
    seq: int,
    time_ms: int,
    kind: EventKind,
    hub: str | None,
    delivery_id: str | None,
    sender: str | None,
    target: str | None,
    message_type: str | None,
    message_class: MessageClass | None,
    diagnostic_key: str | None,
    answers: str | None,
    error: str | None,
    timed_out: bool | None,
    attempt: int | None,
    leg_id: str | None,
    leg_kind: str | None,
    subscription_id: str | None,
    stage: int | None,
    graceful: bool | None,
    reason: str | None,
    depth: int | None,
    packaged: bool | None,
    watermark: int | None,
    custom: str | None = None,
    data: tuple[tuple[str, Scalar], ...] | None = None,
) -> TraceEvent:
    """`TraceEvent(seq, time_ms, kind, ...)` with every field given by position."""
    event: TraceEvent = _NEW(TraceEvent)
    _SET_SEQ(event, seq)
    _SET_TIME_MS(event, time_ms)
    _SET_KIND(event, kind)
    _SET_HUB(event, hub)
    _SET_DELIVERY_ID(event, delivery_id)
    _SET_SENDER(event, sender)
    _SET_TARGET(event, target)
    _SET_MESSAGE_TYPE(event, message_type)
    _SET_MESSAGE_CLASS(event, message_class)
    _SET_DIAGNOSTIC_KEY(event, diagnostic_key)
    _SET_ANSWERS(event, answers)
    _SET_ERROR(event, error)
    _SET_TIMED_OUT(event, timed_out)
    _SET_ATTEMPT(event, attempt)
    _SET_LEG_ID(event, leg_id)
    _SET_LEG_KIND(event, leg_kind)
    _SET_SUBSCRIPTION_ID(event, subscription_id)
    _SET_STAGE(event, stage)
    _SET_GRACEFUL(event, graceful)
    _SET_REASON(event, reason)
    _SET_DEPTH(event, depth)
    _SET_PACKAGED(event, packaged)
    _SET_WATERMARK(event, watermark)
    _SET_CUSTOM(event, custom)
    _SET_DATA(event, data)
    return event
