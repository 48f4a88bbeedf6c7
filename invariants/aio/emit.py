"""The trace shim: one call per trace event kind, stamped with seq and virtual time.

Mesh code may keep these calls in production: under the harness (a kit adapter's loop
running, or an adapter's synchronous call into the mesh) each appends a `TraceEvent` to the
adapter's trace, its `seq` the next position and its `time_ms` the loop's virtual time; on
a stock loop, or outside any loop, each is a no-op that returns None.

    from invariants.aio import emit
    emit.posted(hub="alpha", delivery_id=d.id, sender=d.sender, message_type="Ping")

The fields are `TraceEvent`'s (docs/adapter.md says which each kind carries).
"""

from __future__ import annotations

from typing import Unpack

from invariants.aio.rig import current_rig
from invariants.aio.tracelog import TraceFields
from invariants.trace import EventKind, Scalar, TraceEvent


def emit(kind: EventKind, **fields: Unpack[TraceFields]) -> TraceEvent | None:
    """Record one event of `kind` (None outside the harness)."""
    rig = current_rig()
    if rig is None:
        return None
    return rig.trace.emit(kind, **fields)


def posted(**fields: Unpack[TraceFields]) -> TraceEvent | None:
    """`EventKind.POSTED`."""
    return emit(EventKind.POSTED, **fields)


def enqueued(**fields: Unpack[TraceFields]) -> TraceEvent | None:
    """`EventKind.ENQUEUED`."""
    return emit(EventKind.ENQUEUED, **fields)


def handled(**fields: Unpack[TraceFields]) -> TraceEvent | None:
    """`EventKind.HANDLED`."""
    return emit(EventKind.HANDLED, **fields)


def handler_faulted(**fields: Unpack[TraceFields]) -> TraceEvent | None:
    """`EventKind.HANDLER_FAULTED`."""
    return emit(EventKind.HANDLER_FAULTED, **fields)


def rejected(**fields: Unpack[TraceFields]) -> TraceEvent | None:
    """`EventKind.REJECTED`."""
    return emit(EventKind.REJECTED, **fields)


def gated(**fields: Unpack[TraceFields]) -> TraceEvent | None:
    """`EventKind.GATED`."""
    return emit(EventKind.GATED, **fields)


def dropped(**fields: Unpack[TraceFields]) -> TraceEvent | None:
    """`EventKind.DROPPED`."""
    return emit(EventKind.DROPPED, **fields)


def shed(**fields: Unpack[TraceFields]) -> TraceEvent | None:
    """`EventKind.SHED`."""
    return emit(EventKind.SHED, **fields)


def breaker_tripped(**fields: Unpack[TraceFields]) -> TraceEvent | None:
    """`EventKind.BREAKER_TRIPPED`."""
    return emit(EventKind.BREAKER_TRIPPED, **fields)


def turn_blocked(**fields: Unpack[TraceFields]) -> TraceEvent | None:
    """`EventKind.TURN_BLOCKED`."""
    return emit(EventKind.TURN_BLOCKED, **fields)


def turn_released(**fields: Unpack[TraceFields]) -> TraceEvent | None:
    """`EventKind.TURN_RELEASED`."""
    return emit(EventKind.TURN_RELEASED, **fields)


def hub_created(**fields: Unpack[TraceFields]) -> TraceEvent | None:
    """`EventKind.HUB_CREATED`."""
    return emit(EventKind.HUB_CREATED, **fields)


def failure_emitted(**fields: Unpack[TraceFields]) -> TraceEvent | None:
    """`EventKind.FAILURE_EMITTED`."""
    return emit(EventKind.FAILURE_EMITTED, **fields)


def answer_suppressed(**fields: Unpack[TraceFields]) -> TraceEvent | None:
    """`EventKind.ANSWER_SUPPRESSED`."""
    return emit(EventKind.ANSWER_SUPPRESSED, **fields)


def leg_started(**fields: Unpack[TraceFields]) -> TraceEvent | None:
    """`EventKind.LEG_STARTED`."""
    return emit(EventKind.LEG_STARTED, **fields)


def leg_ended(**fields: Unpack[TraceFields]) -> TraceEvent | None:
    """`EventKind.LEG_ENDED`."""
    return emit(EventKind.LEG_ENDED, **fields)


def dispatch_refused(**fields: Unpack[TraceFields]) -> TraceEvent | None:
    """`EventKind.DISPATCH_REFUSED`."""
    return emit(EventKind.DISPATCH_REFUSED, **fields)


def attempt(**fields: Unpack[TraceFields]) -> TraceEvent | None:
    """`EventKind.ATTEMPT`."""
    return emit(EventKind.ATTEMPT, **fields)


def attempt_failed(**fields: Unpack[TraceFields]) -> TraceEvent | None:
    """`EventKind.ATTEMPT_FAILED`."""
    return emit(EventKind.ATTEMPT_FAILED, **fields)


def call_received(**fields: Unpack[TraceFields]) -> TraceEvent | None:
    """`EventKind.CALL_RECEIVED`."""
    return emit(EventKind.CALL_RECEIVED, **fields)


def effect_applied(**fields: Unpack[TraceFields]) -> TraceEvent | None:
    """`EventKind.EFFECT_APPLIED`."""
    return emit(EventKind.EFFECT_APPLIED, **fields)


def saturation_logged(**fields: Unpack[TraceFields]) -> TraceEvent | None:
    """`EventKind.SATURATION_LOGGED`."""
    return emit(EventKind.SATURATION_LOGGED, **fields)


def saturation_cleared(**fields: Unpack[TraceFields]) -> TraceEvent | None:
    """`EventKind.SATURATION_CLEARED`."""
    return emit(EventKind.SATURATION_CLEARED, **fields)


def subscribe_attempt(**fields: Unpack[TraceFields]) -> TraceEvent | None:
    """`EventKind.SUBSCRIBE_ATTEMPT`."""
    return emit(EventKind.SUBSCRIBE_ATTEMPT, **fields)


def subscribe_answered(**fields: Unpack[TraceFields]) -> TraceEvent | None:
    """`EventKind.SUBSCRIBE_ANSWERED`."""
    return emit(EventKind.SUBSCRIBE_ANSWERED, **fields)


def subscribe_terminated(**fields: Unpack[TraceFields]) -> TraceEvent | None:
    """`EventKind.SUBSCRIBE_TERMINATED`."""
    return emit(EventKind.SUBSCRIBE_TERMINATED, **fields)


def stop_requested(**fields: Unpack[TraceFields]) -> TraceEvent | None:
    """`EventKind.STOP_REQUESTED`."""
    return emit(EventKind.STOP_REQUESTED, **fields)


def stop_stage_entered(**fields: Unpack[TraceFields]) -> TraceEvent | None:
    """`EventKind.STOP_STAGE_ENTERED`."""
    return emit(EventKind.STOP_STAGE_ENTERED, **fields)


def stop_stage_left(**fields: Unpack[TraceFields]) -> TraceEvent | None:
    """`EventKind.STOP_STAGE_LEFT`."""
    return emit(EventKind.STOP_STAGE_LEFT, **fields)


def stop_hold_started(**fields: Unpack[TraceFields]) -> TraceEvent | None:
    """`EventKind.STOP_HOLD_STARTED`."""
    return emit(EventKind.STOP_HOLD_STARTED, **fields)


def stop_hold_released(**fields: Unpack[TraceFields]) -> TraceEvent | None:
    """`EventKind.STOP_HOLD_RELEASED`."""
    return emit(EventKind.STOP_HOLD_RELEASED, **fields)


def residual_leg(**fields: Unpack[TraceFields]) -> TraceEvent | None:
    """`EventKind.RESIDUAL_LEG`."""
    return emit(EventKind.RESIDUAL_LEG, **fields)


def stop_completed(**fields: Unpack[TraceFields]) -> TraceEvent | None:
    """`EventKind.STOP_COMPLETED`."""
    return emit(EventKind.STOP_COMPLETED, **fields)


def fault_injected(**fields: Unpack[TraceFields]) -> TraceEvent | None:
    """`EventKind.FAULT_INJECTED`."""
    return emit(EventKind.FAULT_INJECTED, **fields)


def custom(name: str, *, hub: str | None = None, **data: Scalar) -> TraceEvent | None:
    """One of the mesh's own events (`EventKind.CUSTOM`): `name` is "namespace.kind",
    `data` its fields (JSON scalars), read by a team's own invariants."""
    rig = current_rig()
    if rig is None:
        return None
    return rig.trace.custom(name, hub=hub, **data)
