"""INV5 on hand-built traces: a graceful stop holds at Active until accepted legs landed."""

from dyn_traces import K, Trace

from invariants.adapter import FaultKind
from invariants.checks import Injected
from invariants.checks import inv5_stop_holds as inv5
from invariants.checks.monitor import run_monitor

STAGES = [20_000, 19_999, 19_998, 4_000, 2_000]


def _run_stages(t: Trace, stages: list[int]) -> None:
    for stage in stages:
        t.add(K.STOP_STAGE_ENTERED, hub="silo", stage=stage)
        t.add(K.STOP_STAGE_LEFT, hub="silo", stage=stage)


def _graceful_stop_with_leg(t: Trace, *, leg_ends_at: int) -> None:
    t.add(K.LEG_STARTED, hub="router", leg_id="L1", leg_kind="route", delivery_id="d1")
    t.at(100).add(K.STOP_REQUESTED, hub="silo", graceful=True)
    t.add(K.STOP_STAGE_ENTERED, hub="silo", stage=20_000)
    t.add(K.STOP_HOLD_STARTED, hub="silo")
    t.at(leg_ends_at).add(K.LEG_ENDED, hub="router", leg_id="L1")


def test_stop_held_until_the_leg_landed_passes() -> None:
    t = Trace()
    _graceful_stop_with_leg(t, leg_ends_at=2_000)
    t.add(K.STOP_HOLD_RELEASED, hub="silo", reason="drained")
    t.add(K.STOP_STAGE_LEFT, hub="silo", stage=20_000)
    _run_stages(t, STAGES[1:])
    t.add(K.STOP_COMPLETED, hub="silo")
    assert inv5.check(t.events, final=True) == []


def test_stop_that_does_not_hold_sees_legs_at_deactivation() -> None:
    t = Trace()
    t.add(K.LEG_STARTED, hub="router", leg_id="L1", leg_kind="route")
    t.at(100).add(K.STOP_REQUESTED, hub="silo", graceful=True)
    _run_stages(t, STAGES)
    messages = [v.message for v in inv5.check(t.events)]
    assert any("before the budget expired" in m for m in messages)
    assert any("1 leg(s) in flight at GrainDeactivation" in m for m in messages)


def test_budget_expiry_releases_and_names_the_residual_oldest_first() -> None:
    t = Trace()
    t.add(K.LEG_STARTED, hub="router", leg_id="L0", leg_kind="nack")
    _graceful_stop_with_leg(t, leg_ends_at=10**9)
    t.events.pop()  # L1 never ends
    t.at(30_100).add(K.RESIDUAL_LEG, hub="silo", leg_id="L0")
    t.add(K.RESIDUAL_LEG, hub="silo", leg_id="L1")
    t.add(K.STOP_HOLD_RELEASED, hub="silo", reason="budget")
    t.add(K.STOP_STAGE_LEFT, hub="silo", stage=20_000)
    _run_stages(t, STAGES[1:4])
    t.add(K.LEG_ENDED, hub="router", leg_id="L0")
    t.add(K.LEG_ENDED, hub="router", leg_id="L1")
    _run_stages(t, STAGES[4:])
    t.add(K.STOP_COMPLETED, hub="silo")
    assert inv5.check(t.events, final=True) == []


def test_residuals_logged_out_of_order_are_flagged() -> None:
    t = Trace()
    t.add(K.LEG_STARTED, hub="router", leg_id="L0", leg_kind="nack")
    _graceful_stop_with_leg(t, leg_ends_at=10**9)
    t.events.pop()
    t.at(30_100).add(K.RESIDUAL_LEG, hub="silo", leg_id="L1")
    t.add(K.RESIDUAL_LEG, hub="silo", leg_id="L0")
    t.add(K.STOP_HOLD_RELEASED, hub="silo", reason="budget")
    t.add(K.STOP_STAGE_LEFT, hub="silo", stage=20_000)
    [v] = inv5.check(t.events)
    assert "oldest first" in v.message


def test_hold_past_the_budget_is_overdue() -> None:
    t = Trace()
    _graceful_stop_with_leg(t, leg_ends_at=10**9)
    t.events.pop()
    assert inv5.check(t.events, now_ms=30_100) == []
    [v] = inv5.check(t.events, now_ms=30_101)
    assert "still held at Active" in v.message


def test_non_graceful_stop_that_holds_is_flagged() -> None:
    t = Trace()
    t.add(K.LEG_STARTED, hub="router", leg_id="L1", leg_kind="route")
    t.add(K.STOP_REQUESTED, hub="silo", graceful=False)
    t.add(K.STOP_STAGE_ENTERED, hub="silo", stage=20_000)
    t.at(500).add(K.STOP_STAGE_LEFT, hub="silo", stage=20_000)
    [v] = inv5.check(t.events)
    assert "non-graceful stop held Active for 500 ms" in v.message


def test_non_graceful_stop_without_hold_passes_with_legs_in_flight() -> None:
    t = Trace()
    t.add(K.LEG_STARTED, hub="router", leg_id="L1", leg_kind="route")
    t.add(K.STOP_REQUESTED, hub="silo", graceful=False)
    _run_stages(t, STAGES[:4])
    t.add(K.LEG_ENDED, hub="router", leg_id="L1")
    _run_stages(t, STAGES[4:])
    t.add(K.STOP_COMPLETED, hub="silo")
    assert inv5.check(t.events, final=True) == []


def test_routing_after_the_stop_completed_is_flagged() -> None:
    t = Trace()
    t.add(K.STOP_REQUESTED, hub="silo", graceful=True)
    _run_stages(t, STAGES)
    t.add(K.STOP_COMPLETED, hub="silo")
    t.add(K.FAILURE_EMITTED, hub="router", answers="d1", error="ShuttingDown")
    [v] = inv5.check(t.events)
    assert "failure_emitted after the stop completed" in v.message


def test_new_route_leg_after_stop_began_is_flagged() -> None:
    t = Trace()
    t.add(K.STOP_REQUESTED, hub="silo", graceful=True)
    t.add(K.LEG_STARTED, hub="router", leg_id="L9", leg_kind="route")
    [v] = inv5.check(t.events)
    assert "dispatched after the stop began" in v.message


def test_stages_out_of_order_and_unfinished_stop_are_flagged() -> None:
    t = Trace()
    t.add(K.STOP_REQUESTED, hub="silo", graceful=True)
    _run_stages(t, [20_000, 4_000, 19_998])
    found = [v.message for v in inv5.check(t.events, final=True)]
    assert "stop stage 19998 entered after stage 4000" in found
    assert "the stop never completed" in found


def test_leg_never_ended_at_quiescence_is_unfinished() -> None:
    t = Trace()
    t.add(K.LEG_STARTED, hub="router", leg_id="L1", leg_kind="route")
    assert inv5.check(t.events) == []
    assert [v.message for v in inv5.check(t.events, final=True)] == ["leg L1 never ended"]


def test_packaged_delivery_landing_after_the_stop_is_routing_after_stop() -> None:
    t = Trace()
    t.add(K.STOP_REQUESTED, hub="silo", graceful=True)
    _run_stages(t, STAGES)
    t.add(K.STOP_COMPLETED, hub="silo")
    t.add(K.POSTED, hub="client", delivery_id="d9", packaged=False)  # a direct post: fine
    assert inv5.check(t.events) == []
    t.add(K.POSTED, hub="client", delivery_id="n1", packaged=True)  # a NACK nobody waited for
    [v] = inv5.check(t.events)
    assert "routed delivery landed after the stop completed" in v.message


def _a_leg_and_a_crash(crashed: bool, leg_after: bool) -> tuple[Trace, list[Injected]]:
    """Leg L1 in flight, then (`crashed`) the harness crashes a node, then (`leg_after`)
    leg L2 starts."""
    t = Trace()
    t.add(K.LEG_STARTED, hub="router", leg_id="L1", leg_kind="route")
    facts = [Injected(FaultKind.CRASH_NODE, "h0", 1, 100, 0, len(t.events))] if crashed else []
    if leg_after:
        t.add(K.LEG_STARTED, hub="router", leg_id="L2", leg_kind="route")
    return t, facts


def test_legs_in_flight_when_the_harness_crashed_a_node_are_not_held_for() -> None:
    """A crashed node's legs are lost with it, and the harness does not know which node a
    leg was on: a stop right after a crash owes no hold to the legs in flight at it. The
    control: the same stop with no crash; and a leg started after the crash is held for."""
    def found(crashed: bool, leg_after: bool = False) -> list[str]:
        t, facts = _a_leg_and_a_crash(crashed, leg_after)
        t.at(100).add(K.STOP_REQUESTED, hub="silo", graceful=True)
        _run_stages(t, STAGES)
        return [v.message for v in run_monitor(inv5.StopHolds(), t.events, facts=facts)]

    assert found(crashed=True) == []
    assert any("1 leg(s) in flight at GrainDeactivation" in m for m in found(crashed=False))
    assert any("1 leg(s) in flight at GrainDeactivation" in m
               for m in found(crashed=True, leg_after=True))


def test_a_leg_in_flight_when_the_harness_crashed_a_node_owes_no_end() -> None:
    """A crash leaves no word: a leg in flight at it may never end (docs/adapter.md,
    Network). The control: the same leg never ended with no crash is flagged, and so is a
    leg started after the crash."""
    def found(crashed: bool, leg_after: bool = False) -> list[str]:
        t, facts = _a_leg_and_a_crash(crashed, leg_after)
        return [v.message for v in run_monitor(inv5.StopHolds(), t.events, facts=facts,
                                               final=True)]

    assert found(crashed=True) == []
    assert found(crashed=False) == ["leg L1 never ended"]
    assert found(crashed=True, leg_after=True) == ["leg L2 never ended"]


def test_a_leg_id_started_twice_is_flagged() -> None:
    """A node rebuilt after a crash that numbers its legs afresh starts a leg id its
    predecessor started: the two legs are one to every reader. The control: a fresh id."""
    def found(second: str) -> list[str]:
        t, facts = _a_leg_and_a_crash(crashed=True, leg_after=False)
        t.at(200).add(K.LEG_STARTED, hub="router", leg_id=second, leg_kind="route")
        t.add(K.LEG_ENDED, hub="router", leg_id=second)
        return [v.message for v in run_monitor(inv5.StopHolds(), t.events, facts=facts,
                                               final=True)]

    assert found("L1") == ["leg L1 started twice (a leg id is started once)"]
    assert found("L2") == []
