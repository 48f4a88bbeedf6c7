"""Typed trace events: the single source every dynamic check reads.

A mesh under test (the reference mesh or any adapter) emits one `TraceEvent` per step.
The checkers know nothing else about the mesh, so every fact an invariant needs must be
stated on an event. Times are virtual milliseconds (integers, so traces are exact and
canonical); `seq` is the event's position in the trace.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, fields
from enum import StrEnum
from typing import Any


class EventKind(StrEnum):
    """What happened. Grouped by the part of the mesh that emits it."""

    # Hub intake and action block.
    POSTED = "posted"  # a delivery was offered to a hub's intake
    ENQUEUED = "enqueued"  # it passed every intake gate and joined the queue
    HANDLED = "handled"  # its handler ran (one turn of the action block)
    HANDLER_FAULTED = "handler_faulted"  # the handler raised; logged, the pump goes on
    REJECTED = "rejected"  # identity guard: logged once, dropped, never answered
    GATED = "gated"  # refused by the teardown gate of a stopping hub
    DROPPED = "dropped"  # per-key storm breaker drop (answer: Ignored)
    SHED = "shed"  # aggregate watermark shed (answer: Ignored)
    BREAKER_TRIPPED = "breaker_tripped"  # a key crossed the per-window threshold
    TURN_BLOCKED = "turn_blocked"  # a hub's turn is held (fault injection)
    TURN_RELEASED = "turn_released"
    HUB_CREATED = "hub_created"  # a hub joined the mesh, with its aggregate `watermark`

    # Answers.
    FAILURE_EMITTED = "failure_emitted"  # a DeliveryFailure answering `answers` was sent
    ANSWER_SUPPRESSED = "answer_suppressed"  # report_failure declined (may_answer false / answered)

    # Routing: legs, attempts, the retry ladder, calls at the callee.
    LEG_STARTED = "leg_started"  # a route leg or a NACK (see `leg_kind`) was dispatched
    LEG_ENDED = "leg_ended"
    DISPATCH_REFUSED = "dispatch_refused"  # refused as ShuttingDown once a stop has begun
    ATTEMPT = "attempt"  # attempt number `attempt` (0 = first call, n = n-th retry)
    ATTEMPT_FAILED = "attempt_failed"  # with `error` and `timed_out`
    CALL_RECEIVED = "call_received"  # the callee accepted a call into its work queue
    # The callee applied a grain call's request (`delivery_id`, at `hub`): the ground truth
    # of its effect, which an at-least-once mesh applies at most once however often re-sent.
    EFFECT_APPLIED = "effect_applied"
    SATURATION_LOGGED = "saturation_logged"  # in-flight gauge crossed 64
    SATURATION_CLEARED = "saturation_cleared"  # and fell back to 32

    # Bounded subscribe.
    SUBSCRIBE_ATTEMPT = "subscribe_attempt"
    SUBSCRIBE_ANSWERED = "subscribe_answered"
    SUBSCRIBE_TERMINATED = "subscribe_terminated"  # terminal error: nothing more is sent

    # Silo stop lifecycle.
    STOP_REQUESTED = "stop_requested"  # `graceful` says whether the token was live
    STOP_STAGE_ENTERED = "stop_stage_entered"
    STOP_STAGE_LEFT = "stop_stage_left"
    STOP_HOLD_STARTED = "stop_hold_started"
    STOP_HOLD_RELEASED = "stop_hold_released"  # `reason`: drained | budget | cancelled
    RESIDUAL_LEG = "residual_leg"  # logged at budget expiry, oldest first
    STOP_COMPLETED = "stop_completed"

    # Test control.
    FAULT_INJECTED = "fault_injected"

    # A mesh's own event (`custom_event`): its namespaced name in `custom`, its fields in
    # `data`. The built-in checkers ignore it; a team's invariants read it.
    CUSTOM = "custom"


class MessageClass(StrEnum):
    """The answer and shedding policy of a payload, as the mesh sees it.

    `IGNORABLE` is the only sheddable class (heartbeats and other can-be-ignored
    traffic). Shutdown/dispose requests are can-be-ignored too, but they are
    `LIFECYCLE`: never shed, never counted by the breaker.
    """

    USER = "user"  # user-facing requests and events
    LIFECYCLE = "lifecycle"  # initialize, shutdown request, dispose request
    SYSTEM = "system"  # system messages: exempt only from the identity check
    IGNORABLE = "ignorable"  # can-be-ignored, e.g. heartbeat
    FAILURE = "failure"  # DeliveryFailure

    @property
    def sheddable(self) -> bool:
        return self in _SHEDDABLE

    @property
    def suppresses_answer(self) -> bool:
        """A failure to route this payload is never answered."""
        return self in _SUPPRESSES_ANSWER


# Read by the properties above on every intake: sets built once, since an enum member read
# off its class (`MessageClass.IGNORABLE`) is a slow attribute lookup.
_SHEDDABLE = frozenset({MessageClass.IGNORABLE})
_SUPPRESSES_ANSWER = frozenset(
    {MessageClass.IGNORABLE, MessageClass.FAILURE, MessageClass.LIFECYCLE}
)


@dataclass(frozen=True, slots=True)
class TraceEvent:
    """One step of the mesh. Fields that do not apply to a kind stay None."""

    seq: int
    time_ms: int
    kind: EventKind
    hub: str | None = None  # the hub (or router/silo) where it happened
    delivery_id: str | None = None
    sender: str | None = None
    target: str | None = None
    message_type: str | None = None
    message_class: MessageClass | None = None
    diagnostic_key: str | None = None  # payload identity (stream id, node path)
    answers: str | None = None  # FAILURE_EMITTED: the delivery id it answers
    error: str | None = None  # DeliveryFailure error type or attempt failure
    timed_out: bool | None = None  # ATTEMPT_FAILED: a timeout anywhere in the error graph
    attempt: int | None = None  # ATTEMPT / SUBSCRIBE_ATTEMPT number, 0-based
    leg_id: str | None = None
    leg_kind: str | None = None  # "route" | "nack" | "grain"
    subscription_id: str | None = None
    stage: int | None = None  # lifecycle stage value
    graceful: bool | None = None
    reason: str | None = None
    depth: int | None = None  # queue depth or gauge value where it matters
    packaged: bool | None = None  # the delivery's payload is RawJson
    watermark: int | None = None  # HUB_CREATED / SHED: the hub's aggregate watermark
    custom: str | None = None  # CUSTOM: the mesh's name for it, "namespace.kind"
    data: tuple[tuple[str, Scalar], ...] | None = None  # CUSTOM: its fields, as given

    def value(self, name: str, default: Scalar = None) -> Scalar:
        """A custom event's field `name` (`default` where it has none)."""
        for key, value in self.data or ():
            if key == name:
                return value
        return default

    def to_json(self) -> dict[str, Any]:
        """The canonical dict: None fields left out, enums as their values, a custom
        event's fields as an object."""
        found = {k: v for k, v in asdict(self).items() if v is not None}
        if self.data is not None:
            found["data"] = dict(self.data)
        return found

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TraceEvent:
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"trace event has unknown fields: {sorted(unknown)}")
        values = dict(data)
        values["kind"] = EventKind(values["kind"])
        if "message_class" in values:
            values["message_class"] = MessageClass(values["message_class"])
        if "data" in values:
            values["data"] = _fields_of(values.get("custom"), values["data"])
        return cls(**values)


Scalar = str | int | float | bool | None
# A custom event's name: its namespace (the mesh's or the team's), a dot, then the kind,
# each a lower-case identifier ("aiomesh.turn_started").
_CUSTOM_NAME = re.compile(r"[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)+")
# The harness's own events are `EventKind`s: no custom event takes their namespace.
RESERVED_NAMESPACES = frozenset({"harness", "invariants"})


class CustomEventError(ValueError):
    """A custom event that cannot be recorded; the message names it."""


def _fields_of(name: object, data: object) -> tuple[tuple[str, Scalar], ...]:
    if not isinstance(data, dict):
        raise CustomEventError(f"custom event {name!r}: its fields must be a mapping, got "
                               f"{type(data).__name__}")
    for key, value in data.items():
        if not isinstance(key, str) or not key.isidentifier():
            raise CustomEventError(f"custom event {name!r}: field name {key!r} is not an "
                                   "identifier")
        if value is not None and not isinstance(value, str | int | float | bool):
            raise CustomEventError(f"custom event {name!r}: field {key!r} is a "
                                   f"{type(value).__name__}; a field is a str, int, float, "
                                   "bool or None (the trace is JSON)")
    return tuple(data.items())


def custom_event(seq: int, time_ms: int, name: str, *, hub: str | None = None,
                 **data: Scalar) -> TraceEvent:
    """A mesh's own event: `name` is "namespace.kind" (lower-case identifiers, the
    namespace the mesh's or the team's own), `data` its fields (JSON scalars). A bad name
    or field is a `CustomEventError` naming it."""
    if not isinstance(name, str) or not _CUSTOM_NAME.fullmatch(name):
        raise CustomEventError(f"custom event {name!r}: expected 'namespace.kind', lower-case "
                               "identifiers (e.g. 'aiomesh.turn_started')")
    namespace = name.partition(".")[0]
    if namespace in RESERVED_NAMESPACES:
        raise CustomEventError(f"custom event {name!r}: the namespace {namespace!r} is the "
                               "harness's own; use the mesh's or the team's")
    return TraceEvent(seq, time_ms, EventKind.CUSTOM, hub=hub, custom=name,
                      data=_fields_of(name, data))


def canonical_line(event: TraceEvent) -> str:
    """One JSON line, keys sorted, no spaces: byte-identical across processes."""
    return json.dumps(event.to_json(), sort_keys=True, separators=(",", ":"))


def dump_jsonl(events: Iterable[TraceEvent]) -> str:
    return "".join(canonical_line(e) + "\n" for e in events)


def digest(events: Iterable[TraceEvent]) -> str:
    """sha256 of the canonical JSON-lines form."""
    h = hashlib.sha256()
    for e in events:
        h.update(canonical_line(e).encode())
        h.update(b"\n")
    return h.hexdigest()

