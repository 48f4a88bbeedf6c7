"""Trace recording (SPEC §2 Observability): records read back as typed events, in order,
numbered by position, the same however often the trace is read."""

from __future__ import annotations

import gc

from invariants.trace import EventKind, MessageClass, dump_jsonl, load_jsonl
from reference_impl.envelope import Delivery
from reference_impl.messages import Message
from reference_impl.tracing import TraceRecorder


class Clock:
    def __init__(self) -> None:
        self.now = 0


def _delivery() -> Delivery:
    return Delivery("d1", "a", "b", Message("Update", MessageClass.USER, "node/1"))


def test_an_intake_reads_back_as_posted_then_its_outcome() -> None:
    clock = Clock()
    trace = TraceRecorder(clock)
    clock.now = 5
    trace.intake("b", _delivery(), EventKind.ENQUEUED, depth=2)
    posted, enqueued = trace.events()
    assert (posted.seq, posted.time_ms, posted.kind) == (0, 5, EventKind.POSTED)
    assert (posted.sender, posted.target, posted.message_type, posted.message_class,
            posted.diagnostic_key, posted.packaged) == (
        "a", "b", "Update", MessageClass.USER, "node/1", False)
    assert (enqueued.seq, enqueued.kind, enqueued.depth) == (1, EventKind.ENQUEUED, 3)


def test_a_trip_sits_between_posted_and_dropped() -> None:
    trace = TraceRecorder(Clock())
    trace.intake("b", _delivery(), EventKind.DROPPED, depth=0, tripped=True)
    kinds = [e.kind for e in trace.events()]
    assert kinds == [EventKind.POSTED, EventKind.BREAKER_TRIPPED, EventKind.DROPPED]
    assert trace.events()[2].error == "Ignored"


def test_shed_states_depth_and_watermark() -> None:
    trace = TraceRecorder(Clock())
    trace.intake("b", _delivery(), EventKind.SHED, depth=25, watermark=25)
    shed = trace.events()[1]
    assert (shed.kind, shed.depth, shed.watermark, shed.error) == (
        EventKind.SHED, 25, 25, "Ignored")


def test_reading_is_incremental_and_stable() -> None:
    trace = TraceRecorder(Clock())
    trace.emit(EventKind.TURN_BLOCKED, hub="b")
    first = list(trace.events())
    trace.handled("b", "d1", "Update")
    second = trace.events()
    assert list(second[:1]) == first
    assert [e.seq for e in second] == [0, 1]
    assert load_jsonl(dump_jsonl(second)) == list(second)


def test_disabled_recorder_records_nothing() -> None:
    trace = TraceRecorder(Clock(), enabled=False)
    trace.emit(EventKind.TURN_BLOCKED, hub="b")
    trace.intake("b", _delivery(), EventKind.ENQUEUED, depth=0)
    trace.handled("b", "d1", "Update")
    assert list(trace.events()) == []


def test_hot_records_hold_no_objects_the_cyclic_collector_must_track() -> None:
    """Why a long trace is cheap: records are plain values laid end to end in one list,
    nothing the cyclic collector must track (an enum member, say, it would)."""
    trace = TraceRecorder(Clock())
    trace.intake("b", _delivery(), EventKind.ENQUEUED, depth=0)
    trace.handled("b", "d1", "Update")
    trace.emit(EventKind.LEG_STARTED, leg_id="L1", message_class=MessageClass.USER)
    gc.collect()
    assert trace._raw
    assert not any(gc.is_tracked(value) for value in trace._raw)
    assert gc.is_tracked(EventKind.POSTED)  # what the check would catch
