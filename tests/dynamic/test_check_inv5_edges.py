"""INV5's stop edges on hand-built traces: the teardown gate once closed, a give-up that
comes before the stop reaches Active, and a NACK in flight during the hold."""

import pytest
from dyn_traces import C, K, Trace

from invariants.adapter import Route
from invariants.checks import Posted, StopAsked
from invariants.checks import inv5_stop_holds as inv5
from invariants.checks.inv5_gate import GATE
from invariants.checks.monitor import run_monitor

STAGES = [20_000, 19_999, 19_998, 4_000, 2_000]


def _stop(t: Trace, *, gate_at: str | None = None) -> None:
    """A graceful stop with nothing in flight; `gate_at`'s gate gates one lifecycle post."""
    t.add(K.STOP_REQUESTED, hub="silo", graceful=True)
    for stage in STAGES:
        t.add(K.STOP_STAGE_ENTERED, hub="silo", stage=stage)
        if stage == 4_000 and gate_at is not None:
            t.add(K.POSTED, hub=gate_at, delivery_id="s1", message_class=C.LIFECYCLE)
            t.add(K.GATED, hub=gate_at, delivery_id="s1")
        t.add(K.STOP_STAGE_LEFT, hub="silo", stage=stage)
    t.add(K.STOP_COMPLETED, hub="silo")


def _offer(t: Trace, did: str, hub: str, message_class: C, outcome: K) -> None:
    t.add(K.POSTED, hub=hub, delivery_id=did, message_class=message_class)
    t.add(outcome, hub=hub, delivery_id=did)


def test_an_application_message_refused_at_the_closed_gate_is_counted() -> None:
    t = Trace()
    t.add(K.HUB_CREATED, hub="h0")
    _stop(t)
    _offer(t, "d1", "h0", C.USER, K.GATED)
    _offer(t, "d2", "h0", C.IGNORABLE, K.GATED)
    _offer(t, "d3", "h0", C.LIFECYCLE, K.GATED)  # exempt: not an application message
    monitor = inv5.StopHolds()
    assert run_monitor(monitor, t.events, final=True) == []
    assert monitor.evidence[GATE] == 2


def test_an_application_message_admitted_once_the_stop_completed_is_flagged() -> None:
    t = Trace()
    t.add(K.HUB_CREATED, hub="h0")
    _stop(t)
    t.at(5)
    _offer(t, "d1", "h0", C.USER, K.ENQUEUED)
    t.add(K.HANDLED, hub="h0", delivery_id="d1")
    [v] = inv5.check(t.events)
    assert v.message.startswith("application message d1 enqueued at h0 after its teardown "
                                "gate closed (the stop completed at 0 ms)")
    assert [e.kind for e in v.events] == [K.STOP_COMPLETED, K.POSTED, K.ENQUEUED]


def test_a_gate_seen_closed_during_the_stop_stays_closed() -> None:
    t = Trace()
    t.add(K.STOP_REQUESTED, hub="silo", graceful=True)
    _offer(t, "s1", "h1", C.LIFECYCLE, K.GATED)
    _offer(t, "d2", "h1", C.USER, K.ENQUEUED)
    [v] = inv5.check(t.events)
    assert "d2 enqueued at h1 after its teardown gate closed (it gated s1 at 0 ms)" in v.message


def test_lifecycle_traffic_may_pass_a_closed_gate() -> None:
    t = Trace()
    _stop(t, gate_at="h0")
    _offer(t, "d1", "h0", C.LIFECYCLE, K.ENQUEUED)
    _offer(t, "d2", "h0", C.SYSTEM, K.ENQUEUED)
    _offer(t, "d3", "h0", C.FAILURE, K.ENQUEUED)
    assert inv5.check(t.events, final=True) == []


def test_what_was_queued_before_the_gate_closed_may_still_be_handled() -> None:
    t = Trace()
    t.add(K.HUB_CREATED, hub="h0")
    _offer(t, "d1", "h0", C.USER, K.ENQUEUED)
    _stop(t, gate_at="h0")
    t.add(K.HANDLED, hub="h0", delivery_id="d1")
    assert inv5.check(t.events, final=True) == []


def test_a_hub_made_once_the_stop_began_has_no_gate_of_the_stop() -> None:
    t = Trace()
    t.add(K.STOP_REQUESTED, hub="silo", graceful=True)
    t.add(K.HUB_CREATED, hub="client")  # a sender's hub, made on first use
    _stop(t)
    _offer(t, "d1", "client", C.USER, K.ENQUEUED)
    assert inv5.check(t.events, final=True) == []


def test_the_class_the_harness_posted_decides_what_is_an_application_message() -> None:
    t = Trace()
    t.add(K.HUB_CREATED, hub="h0")
    _stop(t)
    t.add(K.POSTED, hub="h0", delivery_id="d1")  # the mesh states no class
    t.add(K.ENQUEUED, hub="h0", delivery_id="d1")
    posted = Posted("d1", "client", "h0", "Request", C.USER, None, "user", Route.DIRECT,
                    0, len(t.events) - 2)
    [v] = inv5.check(t.events, facts=[posted])
    assert "application message d1 enqueued at h0" in v.message


def _give_up_before_active(*, holds: bool) -> tuple[Trace, list[StopAsked]]:
    t = Trace()
    t.add(K.LEG_STARTED, hub="router", leg_id="L1", leg_kind="route", delivery_id="d1")
    t.at(100).add(K.STOP_REQUESTED, hub="silo", graceful=True)
    facts = [StopAsked(True, 100, 1), StopAsked(False, 100, 2)]  # given up in its instant
    t.add(K.STOP_STAGE_ENTERED, hub="silo", stage=20_000)
    if holds:
        t.add(K.STOP_HOLD_STARTED, hub="silo")
        t.at(5_000).add(K.LEG_ENDED, hub="router", leg_id="L1")
        t.add(K.STOP_HOLD_RELEASED, hub="silo", reason="drained")
    t.add(K.STOP_STAGE_LEFT, hub="silo", stage=20_000)
    return t, facts


def test_a_stop_given_up_before_active_holds_nothing_and_is_counted() -> None:
    t, facts = _give_up_before_active(holds=False)
    monitor = inv5.StopHolds()
    assert run_monitor(monitor, t.events, facts=facts) == []
    assert monitor.evidence[inv5.GAVE_UP_EARLY] == 1
    assert monitor.evidence[inv5.GAVE_UP] == 0 and monitor.evidence[inv5.HELD] == 0


def test_a_stop_given_up_before_active_that_holds_is_flagged() -> None:
    t, facts = _give_up_before_active(holds=True)
    found = [v.message for v in inv5.check(t.events, facts=facts)]
    assert "a stop the harness gave up on holds" in found
    assert any(m.startswith("Active held 4900 ms after the harness gave up on the stop at "
                            "100 ms") for m in found)


def _nack_during_the_hold(t: Trace, *, lands: bool, reported: bool = False) -> None:
    t.add(K.LEG_STARTED, hub="router", leg_id="L1", leg_kind="route", delivery_id="d1")
    t.add(K.STOP_REQUESTED, hub="silo", graceful=True)
    t.add(K.STOP_STAGE_ENTERED, hub="silo", stage=20_000)
    t.add(K.STOP_HOLD_STARTED, hub="silo")
    t.at(5).add(K.FAILURE_EMITTED, hub="monolith", delivery_id="d2", answers="d1",
                target="client")
    t.add(K.LEG_STARTED, hub="router", leg_id="L2", leg_kind="nack", delivery_id="d2",
          target="client")
    t.add(K.LEG_ENDED, hub="router", leg_id="L1", delivery_id="d1", reason="failed")
    t.at(10)
    if lands:
        t.add(K.POSTED, hub="client", delivery_id="d2", message_class=C.FAILURE, packaged=True)
        t.add(K.ENQUEUED, hub="client", delivery_id="d2")
    if reported:  # the sender has gone: reported where it could not be delivered
        t.add(K.ANSWER_SUPPRESSED, hub="monolith", delivery_id="d2", reason="may_answer_false")
    t.add(K.LEG_ENDED, hub="router", leg_id="L2", delivery_id="d2", reason="completed")
    t.add(K.STOP_HOLD_RELEASED, hub="silo", reason="drained")
    t.add(K.STOP_STAGE_LEFT, hub="silo", stage=20_000)


def test_a_nack_that_landed_before_its_leg_ended_is_counted() -> None:
    for reported in (False, True):
        t = Trace()
        _nack_during_the_hold(t, lands=not reported, reported=reported)
        monitor = inv5.StopHolds()
        assert run_monitor(monitor, t.events) == []
        assert monitor.evidence[inv5.NACK_LANDED] == 1


def test_a_nack_leg_that_ends_without_its_answer_landing_is_flagged() -> None:
    t = Trace()
    _nack_during_the_hold(t, lands=False)
    [v] = inv5.check(t.events)
    assert v.message == (
        "NACK leg L2 ended while the graceful stop held at Active, but its answer d2 never "
        "reached client: the hold was released over an answer that did not land")
    assert [e.leg_id for e in v.events] == ["L2", "L2"]


def test_a_nack_leg_outside_a_hold_is_not_judged_here() -> None:
    t = Trace()
    t.add(K.LEG_STARTED, hub="router", leg_id="L2", leg_kind="nack", delivery_id="d2")
    t.add(K.LEG_ENDED, hub="router", leg_id="L2", delivery_id="d2", reason="completed")
    monitor = inv5.StopHolds()
    assert run_monitor(monitor, t.events, final=True) == []
    assert monitor.evidence[inv5.NACK_LANDED] == 0


def test_failure_answers_declared_direct_leave_the_nack_legs_not_applicable() -> None:
    from invariants.checks import CheckParams
    from invariants.checks.inv5_answers import NACK_LANDED
    from invariants.checks.inv5_stop_holds import StopHolds

    direct = CheckParams(stop_failure_answers="direct")
    assert StopHolds.inapplicable(frozenset(), direct)[NACK_LANDED].startswith(
        "stop_failure_answers = 'direct'")
    # Negative control: the reference's policy keeps them applicable.
    assert NACK_LANDED not in StopHolds.inapplicable(frozenset(), CheckParams())
    with pytest.raises(ValueError, match="stop_failure_answers must be one of direct, legs"):
        CheckParams(stop_failure_answers="mailed")


def test_legs_that_end_by_the_response_timeout_leave_the_budget_not_applicable() -> None:
    from invariants.checks import CheckParams
    from invariants.checks.inv5_stop_holds import BUDGET, StopHolds

    bounded = CheckParams(leg_lifetime="response_timeout", response_timeout_ms=2_000,
                          stop_budget_ms=5_000)
    assert StopHolds.inapplicable(frozenset(), bounded)[BUDGET].startswith(
        "leg_lifetime = 'response_timeout': every leg ends by its caller's response timeout "
        "(2000 ms), before a hold's budget (5000 ms)")
    # Negative controls: the reference's policy, and a timeout no shorter than the budget
    # (a leg may then outlive the budget), keep the obligation.
    assert BUDGET not in StopHolds.inapplicable(frozenset(), CheckParams())
    longer = CheckParams(leg_lifetime="response_timeout", response_timeout_ms=5_000,
                         stop_budget_ms=5_000)
    assert BUDGET not in StopHolds.inapplicable(frozenset(), longer)
    with pytest.raises(ValueError, match="leg_lifetime must be one of response_timeout, "
                                         "until_landed, got 'forever'"):
        CheckParams(leg_lifetime="forever")
