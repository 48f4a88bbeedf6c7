"""The checkers judge from the harness facts where those decide the question, on
hand-built traces: each ground-truth rule with the control that passes without the lie."""

from __future__ import annotations

from dyn_traces import C, K, Trace

from invariants.adapter import FaultKind, Route
from invariants.checks import Injected, Posted, StopAsked, Subscribed
from invariants.checks import inv1_rejection_terminal as inv1
from invariants.checks import inv2_bounded_subscribe as inv2
from invariants.checks import inv3_aggregate_watermark as inv3
from invariants.checks import inv4_no_resend_after_timeout as inv4
from invariants.checks import inv5_stop_holds as inv5
from invariants.checks import inv6_fanout_not_dropped as inv6
from invariants.checks.harness_facts import interleave
from invariants.checks.inv4_no_resend_after_timeout import DELAYS, NoResendAfterTimeout


def _posted(did: str, *, key: str | None = None, identity: str | None = "user",
            target: str = "h0", route: Route = Route.GRAIN, seq: int = 0) -> Posted:
    return Posted(did, "client", target, "Request", C.USER, key, identity, route, 0, seq)


def _rejected_once(error: str) -> Trace:
    t = Trace()
    t.add(K.ATTEMPT, hub="grain", delivery_id="d1", target="g", attempt=0)
    t.add(K.ATTEMPT_FAILED, hub="grain", delivery_id="d1", attempt=0, error=error,
          timed_out=False)
    t.add(K.LEG_ENDED, leg_id="L1", delivery_id="d1", reason="failed")
    return t


def test_a_rejection_the_harness_armed_owes_its_retries_whatever_the_mesh_names_it() -> None:
    t = _rejected_once("CalleeRefused")
    armed = Injected(FaultKind.REJECT_NEXT, "g", 7, 0, 0, 0)
    [v] = inv4.check(t.events, facts=[armed])
    assert "rejected delivery d1 given up after 1 attempt(s)" in v.message


def test_an_unknown_error_name_without_an_armed_rejection_owes_nothing() -> None:
    assert inv4.check(_rejected_once("CalleeRefused").events, final=True) == []


def _failed_after(ms: int) -> Trace:
    t = Trace()
    t.add(K.ATTEMPT, hub="grain", delivery_id="d7", target="g", attempt=0)
    t.add(K.CALL_RECEIVED, hub="g", delivery_id="d7", attempt=0)
    t.at(ms).add(K.ATTEMPT_FAILED, hub="grain", delivery_id="d7", attempt=0,
                 error="rejected", timed_out=False)
    t.add(K.FAILURE_EMITTED, hub="grain", delivery_id="n1", answers="d7", error="Failed")
    return t


def test_a_failure_one_response_timeout_after_the_call_was_received_is_a_timeout() -> None:
    found = inv4.check(_failed_after(30_000).events)
    assert [v.message for v in found] == [
        "the mesh reports d7's attempt 0 as rejected (not timed out), but d7 reached the "
        "callee and failed 30,000 ms after it was sent: that is a response timeout"
    ]


def test_a_rejection_before_the_response_timeout_is_the_mesh_own_account() -> None:
    found = inv4.check(_failed_after(29_999).events)
    assert [v.message for v in found] == [
        "rejected delivery d7 given up after 1 attempt(s) (budget of 6 retries not spent)"
    ]


def test_a_timeout_the_harness_armed_is_a_timeout_even_when_reported_at_once() -> None:
    t = Trace()
    t.add(K.ATTEMPT, hub="grain", delivery_id="d1", target="g", attempt=0)
    t.add(K.CALL_RECEIVED, hub="g", delivery_id="d1", attempt=0)
    t.at(1).add(K.ATTEMPT_FAILED, hub="grain", delivery_id="d1", attempt=0,
                error="RejectionError", timed_out=False)
    armed = Injected(FaultKind.TIMEOUT_NEXT, "g", 1, 0, 0, 0)
    [v] = inv4.check(t.events, facts=[armed])
    assert "but the harness made that call time out (timeout_next at g)" in v.message
    # Control: armed after the call, the fault is not this call's.
    late = Injected(FaultKind.TIMEOUT_NEXT, "g", 1, 0, 0, 2)
    assert not any("the harness made" in v.message
                   for v in inv4.check(t.events, facts=[late]))


def test_a_late_retry_is_flagged_though_it_came_before_the_trace_was_read() -> None:
    t = Trace()
    t.add(K.ATTEMPT, hub="grain", delivery_id="d1", target="g", attempt=0)
    t.add(K.ATTEMPT_FAILED, hub="grain", delivery_id="d1", error="rejected", timed_out=False)
    t.at(5_000).add(K.ATTEMPT, hub="grain", delivery_id="d1", target="g", attempt=1)
    [v] = inv4.check(t.events)
    assert "not re-sent after attempt 1 within its backoff of 250 ms" in v.message
    on_time = Trace()
    on_time.add(K.ATTEMPT, hub="grain", delivery_id="d1", target="g", attempt=0)
    on_time.add(K.ATTEMPT_FAILED, hub="grain", delivery_id="d1", error="rejected",
                timed_out=False)
    on_time.at(250).add(K.ATTEMPT, hub="grain", delivery_id="d1", target="g", attempt=1)
    monitor = NoResendAfterTimeout()
    monitor.feed(on_time.events)
    assert monitor.violations() == []
    assert monitor.evidence[DELAYS] == 1


def _holding(reason: str, *, gated: bool = False) -> Trace:
    t = Trace()
    t.add(K.LEG_STARTED, leg_id="L1", leg_kind="route", delivery_id="d1")
    t.add(K.STOP_REQUESTED, hub="silo", graceful=True)
    t.add(K.STOP_STAGE_ENTERED, hub="silo", stage=20_000)
    t.add(K.STOP_HOLD_STARTED, hub="silo")
    if gated:
        t.at(5).add(K.GATED, hub="h0", delivery_id="d1")
    t.at(5).add(K.LEG_ENDED, leg_id="L1", leg_kind="route", delivery_id="d1", reason=reason)
    t.add(K.STOP_HOLD_RELEASED, hub="silo", reason="drained")
    t.add(K.STOP_STAGE_LEFT, hub="silo", stage=20_000)
    return t


def test_a_leg_cut_off_during_the_hold_has_not_landed() -> None:
    [v] = inv5.check(_holding("drained").events)
    assert "leg L1 ended by 'drained' while the graceful stop held at Active" in v.message
    assert inv5.check(_holding("completed").events) == []


def test_a_leg_whose_delivery_was_gated_during_the_hold_has_not_landed() -> None:
    [v] = inv5.check(_holding("failed", gated=True).events)
    assert "its delivery d1 was refused or gated" in v.message
    assert inv5.check(_holding("failed").events) == []


def test_the_stop_the_harness_asked_for_decides_whether_it_is_graceful() -> None:
    t = _holding("completed")
    asked = StopAsked(False, 0, 1)
    found = [v.message for v in inv5.check(t.events, facts=[asked])]
    assert "the mesh reports a graceful stop, but the harness asked for a non-graceful one" \
        in found
    assert inv5.check(t.events, facts=[StopAsked(True, 0, 1)]) == []


def test_an_anonymous_post_the_harness_made_must_not_be_enqueued() -> None:
    t = Trace()
    t.add(K.POSTED, hub="h0", delivery_id="d1", message_class=C.USER)
    t.add(K.ENQUEUED, hub="h0", delivery_id="d1")
    [v] = inv1.check(t.events, facts=[_posted("d1", identity=None)])
    assert "the harness posted d1 with no identity, yet h0 enqueued it" in v.message
    assert inv1.check(t.events, facts=[_posted("d1")]) == []


def test_the_breaker_key_carries_the_identity_the_harness_posted() -> None:
    t = Trace()
    t.add(K.POSTED, hub="h0", delivery_id="d1", sender="client", target="h0",
          message_type="Request")
    [v] = inv6.check(t.events, facts=[_posted("d1", key="node/1", route=Route.DIRECT)])
    assert v.message.startswith(
        "the mesh reports d1 at h0 with payload identity None, but the harness posted it "
        "with node/1"
    )
    assert inv6.check(t.events, facts=[_posted("d1", route=Route.DIRECT)]) == []


def test_facts_are_replayed_before_the_event_at_their_position() -> None:
    t = Trace()
    first = t.add(K.ATTEMPT, delivery_id="d1")
    second = t.add(K.ATTEMPT, delivery_id="d1")
    fact = Injected(FaultKind.REJECT_NEXT, "g", 1, 0, 0, 1)
    assert list(interleave(t.events, [fact])) == [first, fact, second]


def test_a_user_message_the_mesh_calls_ignorable_and_sheds_is_a_user_message_shed() -> None:
    t = Trace()
    t.add(K.HUB_CREATED, hub="h0", watermark=0)
    t.add(K.POSTED, hub="h0", delivery_id="d1", message_class=C.IGNORABLE)
    t.add(K.SHED, hub="h0", delivery_id="d1")
    found = [v.message for v in inv3.check(t.events, facts=[_posted("d1", route=Route.DIRECT)])]
    assert found == [
        "the mesh reports d1 at h0 as ignorable, but the harness posted it as user",
        "user message d1 shed at h0",
    ]
    # Control: the mesh's own account alone, a heartbeat shed past the watermark.
    assert inv3.check(t.events) == []


def test_a_subscription_the_trace_never_mentions_is_still_owed_its_bound() -> None:
    t = Trace()
    t.at(200_000).add(K.HUB_CREATED, hub="h9", watermark=10)
    started = Subscribed("s1", "client", "h0/gone", 5, 0, 0)
    [v] = inv2.check(t.events, facts=[started])
    assert v.message == (
        "the harness subscribed s1 (client -> h0/gone) at 0 ms, but the trace shows "
        "nothing of it within its bound of 187750 ms"
    )
    # Control: the same subscription traced and terminated in time.
    ok = Trace()
    ok.add(K.SUBSCRIBE_ATTEMPT, hub="client", subscription_id="s1", attempt=0)
    ok.at(1_000).add(K.SUBSCRIBE_TERMINATED, hub="client", subscription_id="s1")
    ok.at(200_000).add(K.HUB_CREATED, hub="h9", watermark=10)
    assert inv2.check(ok.events, final=True, facts=[started]) == []
