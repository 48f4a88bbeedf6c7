"""Trace recording (SPEC §2 Observability): records read back as typed events, in order,
numbered by position, the same however often the trace is read."""

from __future__ import annotations

import gc
import json
from dataclasses import replace

from invariants.trace import EventKind, MessageClass, TraceEvent, dump_jsonl
from reference_impl.envelope import Delivery
from reference_impl.mesh import Mesh
from reference_impl.messages import Message
from reference_impl.tracing import TraceRecorder


def load_jsonl(text: str) -> list[TraceEvent]:
    """The events of canonical JSON lines (what `dump_jsonl` writes)."""
    return [TraceEvent.from_json(json.loads(line)) for line in text.splitlines() if line]


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


def _as_emitted(event: TraceEvent) -> TraceEvent:
    """What `emit` records for the same kind and fields (the general path)."""
    clock = Clock()
    clock.now = event.time_ms
    trace = TraceRecorder(clock)
    fields = {k: v for k, v in event.to_json().items() if k not in ("seq", "time_ms", "kind")}
    if "message_class" in fields:
        fields["message_class"] = MessageClass(fields["message_class"])
    trace.emit(event.kind, **fields)
    (emitted,) = trace.events()
    return emitted


def test_leg_records_read_back_as_emit_would_record_them() -> None:
    clock = Clock()
    trace = TraceRecorder(clock)
    clock.now = 7
    packaged = _delivery().package()
    trace.leg_started("L1", "route", "d1", packaged, 4)
    trace.leg_ended("L1", "route", "d1", 3, "failed")
    started, ended = trace.events()
    assert (started.kind, started.leg_id, started.leg_kind, started.delivery_id, started.depth,
            started.sender, started.target, started.message_type, started.message_class,
            started.packaged, started.hub) == (
        EventKind.LEG_STARTED, "L1", "route", "d1", 4, "a", "b", "Update", MessageClass.USER,
        True, None)
    assert (ended.kind, ended.depth, ended.reason, ended.time_ms) == (
        EventKind.LEG_ENDED, 3, "failed", 7)
    assert _as_emitted(started) == replace(started, seq=0)
    assert _as_emitted(ended) == replace(ended, seq=0)
    # The comparison can fail: a record that differs in one field is not what emit gives.
    assert _as_emitted(ended) != replace(ended, seq=0, reason="completed")


def test_disabled_recorder_records_nothing() -> None:
    trace = TraceRecorder(Clock(), enabled=False)
    trace.emit(EventKind.TURN_BLOCKED, hub="b")
    trace.intake("b", _delivery(), EventKind.ENQUEUED, depth=0)
    trace.handled("b", "d1", "Update")
    trace.enqueued("b", _delivery(), 0)
    trace.leg_started("L1", "route", "d1", _delivery(), 1)
    trace.leg_ended("L1", "route", "d1", 0, "completed")
    assert list(trace.events()) == []


def test_hot_records_hold_nothing_new_the_cyclic_collector_must_track() -> None:
    """Why a long trace is cheap: records are plain values laid end to end in one list.
    The only values the cyclic collector tracks are enum members, which exist once each
    however long the trace; a container or an object per record would be new each time."""
    trace = TraceRecorder(Clock())
    trace.intake("b", _delivery(), EventKind.ENQUEUED, depth=0)
    trace.handled("b", "d1", "Update")
    trace.emit(EventKind.LEG_STARTED, leg_id="L1", message_class=MessageClass.USER)
    trace.enqueued("b", _delivery(), 0)
    trace.leg_started("L1", "route", "d1", _delivery(), 1)
    trace.leg_ended("L1", "route", "d1", 0, "completed")
    gc.collect()
    assert trace._raw
    assert _tracked_per_record(trace._raw) == []
    # Negative control: a record holding an object of its own is caught.
    assert _tracked_per_record([*trace._raw, _delivery()]) != []


def _tracked_per_record(values: list[object]) -> list[object]:
    return [v for v in values if gc.is_tracked(v)
            and not isinstance(v, (EventKind, MessageClass))]


def _hub_records(trace_depth: int) -> tuple[list[object], list[object]]:
    """The records the hub appends itself for an enqueued delivery and its turn, and the
    ones `TraceRecorder.enqueued`/`handled` write for the same steps."""
    mesh = Mesh(record_trace=True)
    hub = mesh.create_hub("b")
    mesh.scheduler.run_until(3)
    start = len(mesh.trace._raw)
    delivery = Delivery("d1", "a", "b", Message("Update", MessageClass.USER, "node/1"))
    hub.offer(delivery)
    mesh.scheduler.run(10)
    by_hub = mesh.trace._raw[start:]
    clock = Clock()
    clock.now = 3
    reference = TraceRecorder(clock)
    reference.enqueued("b", delivery, trace_depth)
    reference.handled("b", "d1", "Update")
    return by_hub, reference._raw


def test_an_enqueued_record_reads_back_as_the_general_intake_record() -> None:
    short, general = TraceRecorder(Clock()), TraceRecorder(Clock())
    short.enqueued("b", _delivery(), 4)
    general.intake("b", _delivery(), EventKind.ENQUEUED, 4)
    assert list(short.events()) == list(general.events())
    assert len(short._raw) < len(general._raw)
    other = TraceRecorder(Clock())
    other.intake("b", _delivery(), EventKind.ENQUEUED, 5)
    assert list(short.events()) != list(other.events())  # the comparison sees the depth


def test_the_hub_appends_the_records_enqueued_and_handled_would_write() -> None:
    by_hub, reference = _hub_records(trace_depth=0)
    assert by_hub == reference
    assert _hub_records(trace_depth=1)[1] != reference  # the comparison sees one value off


def test_the_hub_appends_nothing_while_recording_is_off() -> None:
    mesh = Mesh(record_trace=False)
    hub = mesh.create_hub("b")
    hub.offer(Delivery("d1", "a", "b", Message("Update")))
    mesh.scheduler.run(10)
    assert hub.handled_count == 1
    assert mesh.trace._raw == [] and mesh.trace.records is None
