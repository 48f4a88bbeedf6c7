"""Routing quiescence and the silo stop (seed 004, #2638): a graceful stop holds at Active
until accepted legs and NACKs have landed, at most 30 s; a non-graceful stop holds nothing;
new dispatches are refused from the first stop step."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from ref_mutants import mutant_module

from invariants.adapter import Fault, FaultKind, MessageSpec, Route
from invariants.trace import EventKind, TraceEvent
from reference_impl.adapter import ReferenceAdapter
from reference_impl.figures import routing_after_stop
from reference_impl.scenarios import stop_with_legs

STAGES = [20_000, 19_999, 19_998, 4_000, 2_000, -(2**31)]


def test_graceful_stop_holds_until_the_legs_land() -> None:
    run = stop_with_legs(0)
    assert run.summary["in_flight_at_deactivation"] == 0
    assert run.summary["hold_release"] == "drained"
    assert run.summary["routing_after_stop"] == 0
    assert run.summary["stages"] == STAGES


def test_negative_control_no_hold_deactivates_with_legs_in_flight() -> None:
    run = mutant_module("M6", "scenarios").stop_with_legs(0)  # the participant returns at once
    assert run.summary["in_flight_at_deactivation"] >= 1


def test_negative_control_a_detached_nack_runs_after_the_stop() -> None:
    run = mutant_module("M7", "scenarios").stop_with_legs(0)  # the NACK outside the pool
    assert run.summary["routing_after_stop"] >= 1


def test_idle_graceful_stop_does_not_hold() -> None:
    a = ReferenceAdapter()
    a.stop()
    a.run_until_idle(60_000)
    trace = a.trace()
    released = next(e for e in trace if e.kind is EventKind.STOP_HOLD_RELEASED)
    assert (released.reason, released.time_ms) == ("drained", 0)
    assert any(e.kind is EventKind.STOP_COMPLETED for e in trace)


def test_budget_expiry_releases_at_30_s_naming_residual_legs_oldest_first() -> None:
    a = ReferenceAdapter()
    a.create_hub("import")
    a.inject(Fault(FaultKind.SLOW_DESTINATION, "import", duration_ms=45_000))
    first = a.post("p1", "import", MessageSpec("Import"))
    a.advance(10)
    second = a.post("p2", "import", MessageSpec("Import"))
    a.advance(90)
    a.stop()
    a.run_until_idle(10 * 60_000)
    trace = a.trace()
    released = next(e for e in trace if e.kind is EventKind.STOP_HOLD_RELEASED)
    assert (released.reason, released.time_ms) == ("budget", 30_100)
    residual = [e.delivery_id for e in trace if e.kind is EventKind.RESIDUAL_LEG]
    assert residual == [first, second]
    assert routing_after_stop(trace) == 0
    assert not [e for e in trace if e.kind is EventKind.POSTED and e.hub == "import"]


def _non_graceful_stop_with_a_leg(mesh: Any = ReferenceAdapter) -> Sequence[TraceEvent]:
    a = mesh()
    a.create_hub("cache")
    a.inject(Fault(FaultKind.SLOW_DESTINATION, "cache", duration_ms=5_000))
    a.post("portal", "cache", MessageSpec("Update"))
    a.advance(1)
    a.stop(graceful=False)
    a.run_until_idle(60_000)
    return a.trace()


def test_non_graceful_stop_holds_nothing() -> None:
    trace = _non_graceful_stop_with_a_leg()
    assert not [e for e in trace if e.kind is EventKind.STOP_HOLD_STARTED]
    completed = next(e for e in trace if e.kind is EventKind.STOP_COMPLETED)
    assert completed.time_ms == 1
    assert routing_after_stop(trace) == 0


def test_negative_control_a_participant_holding_every_stop_holds_a_non_graceful_one() -> None:
    trace = _non_graceful_stop_with_a_leg(mutant_module("M12", "adapter").ReferenceAdapter)
    assert [e for e in trace if e.kind is EventKind.STOP_HOLD_STARTED]
    completed = next(e for e in trace if e.kind is EventKind.STOP_COMPLETED)
    assert completed.time_ms > 1  # it waited for the slow leg


def test_cancelling_the_hold_releases_it() -> None:
    a = ReferenceAdapter()
    a.create_hub("cache")
    a.inject(Fault(FaultKind.SLOW_DESTINATION, "cache", duration_ms=20_000))
    a.post("portal", "cache", MessageSpec("Update"))
    a.stop()
    a.advance(1_000)
    a.cancel_stop_hold()
    a.run_until_idle(60_000)
    released = next(e for e in a.trace() if e.kind is EventKind.STOP_HOLD_RELEASED)
    assert (released.reason, released.time_ms) == ("cancelled", 1_000)


@pytest.mark.parametrize("route", [Route.MONOLITH, Route.GRAIN])
def test_dispatch_is_refused_from_the_first_stop_step(route: Route) -> None:
    a = ReferenceAdapter()
    a.create_hub("cache")
    a.inject(Fault(FaultKind.SLOW_DESTINATION, "cache", duration_ms=5_000))
    a.post("portal", "cache", MessageSpec("Update"))
    a.stop()
    d = a.post("portal", "cache", MessageSpec("Update"), route=route)
    a.run_until_idle(60_000)
    trace = a.trace()
    assert [e.delivery_id for e in trace if e.kind is EventKind.DISPATCH_REFUSED] == [d]
    answer = next(e for e in trace if e.kind is EventKind.FAILURE_EMITTED)
    assert (answer.answers, answer.error) == (d, "ShuttingDown")
    assert not [e for e in trace if e.kind is EventKind.LEG_STARTED and e.delivery_id == d]
    depths = [e.depth for e in trace if e.kind in (EventKind.LEG_STARTED, EventKind.LEG_ENDED)
              and e.seq > next(s.seq for s in trace if s.kind is EventKind.STOP_REQUESTED)]
    assert depths == sorted(depths, reverse=True)  # the gauge only falls


def test_after_the_stop_posts_are_refused_and_never_answered() -> None:
    a = ReferenceAdapter()
    a.create_hub("cache")
    a.create_hub("portal")
    a.stop()
    a.run_until_idle(60_000)
    a.post("portal", "cache", MessageSpec("Update"))
    a.run_until_idle(60_000)
    trace = a.trace()
    done = next(e for e in trace if e.kind is EventKind.STOP_COMPLETED)
    after = [e.kind for e in trace[done.seq + 1:]]
    assert after == [EventKind.DISPATCH_REFUSED]


def test_a_second_stop_changes_nothing_unless_it_cancels_the_hold() -> None:
    a = ReferenceAdapter()
    a.create_hub("cache")
    a.inject(Fault(FaultKind.SLOW_DESTINATION, "cache", duration_ms=20_000))
    a.post("portal", "cache", MessageSpec("Update"))
    a.stop()
    a.advance(10)
    a.stop()
    assert [e.kind for e in a.trace()].count(EventKind.STOP_REQUESTED) == 1
    assert not [e for e in a.trace() if e.kind is EventKind.STOP_HOLD_RELEASED]
    a.stop(graceful=False)
    a.run_until_idle(60_000)
    released = [(e.reason, e.time_ms) for e in a.trace() if e.kind is EventKind.STOP_HOLD_RELEASED]
    assert released == [("cancelled", 10)]
