"""ReferenceAdapter implements the adapter protocol of SPEC §5."""

from __future__ import annotations

import pytest

from invariants.adapter import (
    Fault,
    FaultKind,
    FirstChooser,
    MeshAdapter,
    MessageSpec,
    Route,
    SeededChooser,
)
from invariants.trace import EventKind, MessageClass
from reference_impl.adapter import ReferenceAdapter, make_adapter


def test_make_adapter_builds_a_mesh_adapter_using_the_chooser() -> None:
    chooser = SeededChooser(3)
    adapter = make_adapter(chooser)
    assert isinstance(adapter, MeshAdapter)
    assert adapter.mesh.scheduler.chooser is chooser


@pytest.mark.parametrize("kind", list(FaultKind))
def test_every_fault_kind_is_injected_and_traced(kind: FaultKind) -> None:
    a = ReferenceAdapter()
    a.create_hub("t")
    a.inject(Fault(kind, "t", duration_ms=100))
    fault = next(e for e in a.trace() if e.kind is EventKind.FAULT_INJECTED)
    assert (fault.reason, fault.target) == (kind.value, "t")


def test_remove_target_makes_routed_posts_not_found() -> None:
    a = ReferenceAdapter()
    a.create_hub("t")
    a.inject(Fault(FaultKind.REMOVE_TARGET, "t"))
    d = a.post("s", "t", MessageSpec("Ping"))
    a.run_until_idle(1_000)
    answer = next(e for e in a.trace() if e.kind is EventKind.FAILURE_EMITTED)
    assert (answer.answers, answer.error, answer.target) == (d, "NotFound", "s")


@pytest.mark.parametrize("route", list(Route))
def test_each_route_delivers_and_only_routers_package(route: Route) -> None:
    a = ReferenceAdapter()
    a.create_hub("t")
    d = a.post("s", "t", MessageSpec("Ping"), route=route)
    a.run_until_idle(1_000)
    posted = next(e for e in a.trace() if e.kind is EventKind.POSTED and e.delivery_id == d)
    assert posted.packaged is (route is not Route.DIRECT)
    assert any(e.kind is EventKind.HANDLED and e.delivery_id == d for e in a.trace())


def test_roundtrip_option_sends_every_routed_envelope_through_json() -> None:
    a = ReferenceAdapter(roundtrip_envelopes=True)
    a.create_hub("t")
    a.inject(Fault(FaultKind.REMOVE_TARGET, "t"))
    a.post("s", "t", MessageSpec("Heartbeat", MessageClass.IGNORABLE))
    control = a.post("s", "t", MessageSpec("Control"))
    a.run_until_idle(1_000)
    answered = [e.answers for e in a.trace() if e.kind is EventKind.FAILURE_EMITTED]
    assert answered == [control]


def test_advance_and_run_until_idle_move_virtual_time_only() -> None:
    a = make_adapter(FirstChooser())
    a.advance(1_500)
    assert a.now_ms() == 1_500
    a.create_hub("t")
    a.inject(Fault(FaultKind.BLOCK_HUB, "t", duration_ms=10_000))
    a.post("s", "t", MessageSpec("Ping"), route=Route.DIRECT)
    assert a.run_until_idle(5_000) is False
    assert a.now_ms() == 6_500
    assert a.run_until_idle(60_000) is True
    assert a.now_ms() == 11_500


def test_record_trace_can_be_switched_off() -> None:
    a = ReferenceAdapter(record_trace=False)
    a.create_hub("t")
    a.post("s", "t", MessageSpec("Ping"))
    a.run_until_idle(1_000)
    assert list(a.trace()) == []
    assert a.mesh.hubs["t"].handled_count == 1


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda a: a.create_hub(""), "non-empty"),
        (lambda a: (a.create_hub("x"), a.create_hub("x")), "already exists"),
        (lambda a: a.advance(-1), "advance"),
        (lambda a: a.inject(Fault(FaultKind.BLOCK_HUB, "x", duration_ms=-5)), "block_hub"),
        (lambda a: a.create_hub("y", watermark=0), "watermark"),
    ],
)
def test_bad_input_is_a_clear_one_line_error(call: object, message: str) -> None:
    a = ReferenceAdapter()
    with pytest.raises(ValueError, match=message) as info:
        call(a)  # type: ignore[operator]
    assert "\n" not in str(info.value)


def test_a_senders_hub_can_be_claimed_once_with_a_watermark() -> None:
    a = ReferenceAdapter()
    a.post("s", "t", MessageSpec("Ping"))  # "s" is made on first use
    a.create_hub("s", watermark=5)
    assert a.mesh.hubs["s"].watermark.watermark == 5
    created = [(e.hub, e.watermark) for e in a.trace() if e.kind is EventKind.HUB_CREATED]
    assert created == [("s", 10_000), ("s", 5)]
    with pytest.raises(ValueError, match="already exists"):
        a.create_hub("s")


def test_blocking_a_missing_hub_does_not_create_it() -> None:
    a = ReferenceAdapter()
    a.inject(Fault(FaultKind.BLOCK_HUB, "ghost", duration_ms=100))
    d = a.post("s", "ghost", MessageSpec("Ping"))
    a.run_until_idle(1_000)
    answer = next(e for e in a.trace() if e.kind is EventKind.FAILURE_EMITTED)
    assert (answer.answers, answer.error) == (d, "NotFound")


def test_overlapping_blocks_hold_until_the_latest_ends() -> None:
    a = ReferenceAdapter()
    a.create_hub("t")
    a.inject(Fault(FaultKind.BLOCK_HUB, "t", duration_ms=1_000))
    a.advance(500)
    a.inject(Fault(FaultKind.BLOCK_HUB, "t", duration_ms=1_000))
    a.post("s", "t", MessageSpec("Ping"), route=Route.DIRECT)
    a.run_until_idle(10_000)
    kinds = [(e.kind, e.time_ms) for e in a.trace()
             if e.kind in (EventKind.TURN_BLOCKED, EventKind.TURN_RELEASED, EventKind.HANDLED)]
    assert kinds == [(EventKind.TURN_BLOCKED, 0), (EventKind.TURN_RELEASED, 1_500),
                     (EventKind.HANDLED, 1_500)]


def test_posts_and_the_mesh_number_deliveries_from_one_counter() -> None:
    a = ReferenceAdapter()
    a.create_hub("cache")
    first = a.post("portal", "cache", MessageSpec("Update"), route=Route.DIRECT)
    assert a.mesh.new_id("d") == "d2"  # what a subscription or a NACK would take next
    assert a.post("portal", "cache", MessageSpec("Update"), route=Route.DIRECT) == "d3"
    assert first == "d1"
    assert a.mesh.new_id("s") == "s1"  # other prefixes keep their own count
