"""The routing pool's in-flight gauge (seed 000: saturation logged once at 64, latched,
cleared at 32)."""

from __future__ import annotations

from invariants.adapter import Fault, FaultKind, MessageSpec
from invariants.trace import EventKind
from reference_impl.adapter import ReferenceAdapter


def _flood_legs(n: int) -> ReferenceAdapter:
    a = ReferenceAdapter()
    a.create_hub("cache")
    a.inject(Fault(FaultKind.SLOW_DESTINATION, "cache", duration_ms=1_000))
    for _ in range(n):
        a.post("portal", "cache", MessageSpec("Update"))
    return a


def test_saturation_is_logged_once_at_64_and_cleared_at_32() -> None:
    a = _flood_legs(100)
    a.run_until_idle(60_000)
    trace = a.trace()
    logged = [e for e in trace if e.kind is EventKind.SATURATION_LOGGED]
    cleared = [e for e in trace if e.kind is EventKind.SATURATION_CLEARED]
    assert [e.depth for e in logged] == [64]
    assert [e.depth for e in cleared] == [32]
    assert logged[0].seq < cleared[0].seq


def test_below_64_nothing_is_logged() -> None:
    a = _flood_legs(63)
    a.run_until_idle(60_000)
    assert not [e for e in a.trace() if e.kind is EventKind.SATURATION_LOGGED]


def test_every_leg_starts_and_ends_once_with_the_gauge_value() -> None:
    a = _flood_legs(10)
    a.run_until_idle(60_000)
    trace = a.trace()
    started = [e for e in trace if e.kind is EventKind.LEG_STARTED]
    ended = [e for e in trace if e.kind is EventKind.LEG_ENDED]
    assert [e.depth for e in started] == list(range(1, 11))
    assert [e.depth for e in ended] == list(range(9, -1, -1))
    assert sorted(e.leg_id or "" for e in started) == sorted(e.leg_id or "" for e in ended)
    assert a.mesh.pool.in_flight == 0


def test_a_nack_is_a_counted_leg_started_inside_its_route_leg() -> None:
    a = ReferenceAdapter()
    d = a.post("portal", "missing", MessageSpec("Update"))
    a.run_until_idle(60_000)
    legs = [(e.kind, e.leg_kind) for e in a.trace()
            if e.kind in (EventKind.LEG_STARTED, EventKind.LEG_ENDED)]
    assert legs == [
        (EventKind.LEG_STARTED, "route"), (EventKind.LEG_STARTED, "nack"),
        (EventKind.LEG_ENDED, "route"), (EventKind.LEG_ENDED, "nack"),
    ]
    nack = next(e for e in a.trace() if e.kind is EventKind.FAILURE_EMITTED)
    assert nack.answers == d
