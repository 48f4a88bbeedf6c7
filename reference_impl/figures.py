"""Figures read off a trace: counts, firsts, retry delays and the stop's facts.

The scenarios' summaries are computed from the trace alone with these, so a figure says
what the trace shows, not what the mesh believes about itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from invariants.trace import EventKind, MessageClass, TraceEvent
from reference_impl.constants import STAGE_GRAIN_DEACTIVATION

ROUTING_KINDS = frozenset({
    EventKind.LEG_STARTED, EventKind.LEG_ENDED, EventKind.ATTEMPT, EventKind.ATTEMPT_FAILED,
    EventKind.CALL_RECEIVED, EventKind.FAILURE_EMITTED,
})


def count(trace: Sequence[TraceEvent], kind: EventKind, **where: Any) -> int:
    return sum(
        1 for e in trace
        if e.kind is kind and all(getattr(e, k) == v for k, v in where.items())
    )


def first(trace: Sequence[TraceEvent], kind: EventKind, **where: Any) -> TraceEvent | None:
    for e in trace:
        if e.kind is kind and all(getattr(e, k) == v for k, v in where.items()):
            return e
    return None


def routing_after_stop(trace: Sequence[TraceEvent]) -> int:
    """Routing-related events after STOP_COMPLETED (route/NACK legs, calls, answers, packaged
    arrivals). Must be 0."""
    done = first(trace, EventKind.STOP_COMPLETED)
    if done is None:
        return 0
    return sum(
        1 for e in trace[done.seq + 1:]
        if e.kind in ROUTING_KINDS or (e.kind is EventKind.POSTED and e.packaged)
    )


def non_sheddable_shed(trace: Sequence[TraceEvent]) -> int:
    """SHED events for deliveries posted with a class that must never be shed."""
    classes = {e.delivery_id: e.message_class for e in trace if e.kind is EventKind.POSTED}
    return sum(
        1 for e in trace
        if e.kind is EventKind.SHED and classes.get(e.delivery_id) is not MessageClass.IGNORABLE
    )


def retry_delay(trace: Sequence[TraceEvent], delivery_id: str) -> int:
    """Sum of the gaps between an attempt failing and the next attempt starting."""
    total, failed_at = 0, None
    for e in trace:
        if e.delivery_id != delivery_id:
            continue
        if e.kind is EventKind.ATTEMPT_FAILED:
            failed_at = e.time_ms
        elif e.kind is EventKind.ATTEMPT and failed_at is not None:
            total += e.time_ms - failed_at
            failed_at = None
    return total


def stop_figures(trace: Sequence[TraceEvent]) -> dict[str, Any]:
    entered = [e for e in trace if e.kind is EventKind.STOP_STAGE_ENTERED]
    deactivation = next((e for e in entered if e.stage == STAGE_GRAIN_DEACTIVATION), None)
    released = first(trace, EventKind.STOP_HOLD_RELEASED)
    requested = first(trace, EventKind.STOP_REQUESTED)
    completed = first(trace, EventKind.STOP_COMPLETED)
    return {
        "in_flight_at_deactivation": deactivation.depth if deactivation else None,
        "held": first(trace, EventKind.STOP_HOLD_STARTED) is not None,
        "hold_release": released.reason if released else None,
        "held_ms": (released.time_ms - requested.time_ms) if released and requested else None,
        "stop_completed": completed is not None,
        "routing_after_stop": routing_after_stop(trace),
        "stages": [e.stage for e in entered],
    }


def leg_start(trace: Sequence[TraceEvent], leg_id: str | None) -> int | None:
    started = first(trace, EventKind.LEG_STARTED, leg_id=leg_id)
    return started.time_ms if started else None
