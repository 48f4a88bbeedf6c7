"""INV4 for an adapter that declares at least once: a timed-out call may be sent again, and
the callee applies each delivery's effect at most once (EFFECT_APPLIED)."""

from dyn_traces import K, Trace

from invariants.adapter import Capability
from invariants.capabilities import DEFAULT_CAPABILITIES
from invariants.checks import check
from invariants.checks.inv4_no_resend_after_timeout import (
    AGGREGATE_REJECTION_FIRST,
    AGGREGATE_TIMEOUT_FIRST,
    APPLIED_ONCE,
    SENT_ONCE,
    TERMINAL,
    TO_BUDGET,
    NoResendAfterTimeout,
)
from invariants.checks.monitor import run_monitor

AT_LEAST_ONCE = DEFAULT_CAPABILITIES | {Capability.AT_LEAST_ONCE}


def _timed_out_then_resent(*, applied: int) -> Trace:
    """d1's first call times out, is sent again 250 ms later and goes through; the callee
    `g` runs both calls and applies the delivery `applied` times."""
    t = Trace()
    t.add(K.ATTEMPT, hub="router", delivery_id="d1", target="g", attempt=0)
    t.add(K.CALL_RECEIVED, hub="g", delivery_id="d1", attempt=0)
    t.at(30_000).add(K.ATTEMPT_FAILED, hub="router", delivery_id="d1", attempt=0,
                     error="timeout", timed_out=True)
    t.add(K.POSTED, hub="g", delivery_id="d1")
    t.add(K.EFFECT_APPLIED, hub="g", delivery_id="d1")
    t.at(30_250).add(K.ATTEMPT, hub="router", delivery_id="d1", target="g", attempt=1)
    t.add(K.CALL_RECEIVED, hub="g", delivery_id="d1", attempt=1)
    t.at(30_260)
    if applied > 1:
        t.add(K.POSTED, hub="g", delivery_id="d1")
        t.add(K.EFFECT_APPLIED, hub="g", delivery_id="d1")
    t.add(K.LEG_ENDED, hub="router", delivery_id="d1", leg_id="l1", reason="completed")
    return t


def test_without_the_capability_a_resend_after_a_timeout_is_still_flagged() -> None:
    t = _timed_out_then_resent(applied=1)
    messages = [v.message for v in check("INV4", t.events, final=True)]
    assert any("re-sent after a timed-out attempt" in m for m in messages)


def test_with_it_a_resend_applied_once_passes_and_counts_as_evidence() -> None:
    t = _timed_out_then_resent(applied=1)
    monitor = NoResendAfterTimeout()
    monitor.capabilities = AT_LEAST_ONCE
    assert run_monitor(monitor, t.events, now_ms=100_000, final=True) == []
    assert monitor.evidence[APPLIED_ONCE] == 1
    assert monitor.evidence[SENT_ONCE] == 0


def test_with_it_a_rejection_still_spends_the_whole_budget() -> None:
    t = Trace()
    delays = [250, 500, 1_000, 2_000, 3_000, 3_000, 3_000]
    for n in range(7):
        t.add(K.ATTEMPT, hub="router", delivery_id="d1", target="g", attempt=n)
        t.add(K.ATTEMPT_FAILED, hub="router", delivery_id="d1", error="rejected",
              timed_out=False)
        t.at(t.t + delays[n])
    t.add(K.LEG_ENDED, hub="router", delivery_id="d1", leg_id="l1", reason="failed")
    monitor = NoResendAfterTimeout()
    monitor.capabilities = AT_LEAST_ONCE
    assert run_monitor(monitor, t.events, final=True) == []
    assert monitor.evidence[TO_BUDGET] == 1


def test_with_it_a_resend_applied_twice_is_flagged_with_both_applications() -> None:
    t = _timed_out_then_resent(applied=2)
    found = check("INV4", t.events, final=True, capabilities=AT_LEAST_ONCE)
    assert len(found) == 1, [v.message for v in found]
    (violation,) = found
    assert "d1's effect applied again at g" in violation.message
    assert [e.kind for e in violation.events] == [K.EFFECT_APPLIED, K.EFFECT_APPLIED]


def test_applications_are_not_judged_without_the_capability() -> None:
    t = _timed_out_then_resent(applied=2)
    messages = [v.message for v in check("INV4", t.events, final=True)]
    assert not any("applied again" in m for m in messages)


def test_the_capability_waives_the_sent_once_obligations_and_needs_the_new_one() -> None:
    waived = NoResendAfterTimeout.inapplicable(frozenset(Capability))
    assert set(waived) == {SENT_ONCE, AGGREGATE_TIMEOUT_FIRST, AGGREGATE_REJECTION_FIRST,
                           TERMINAL}
    assert waived[SENT_ONCE].startswith("the adapter declares at least once: ")
    assert APPLIED_ONCE in waived[SENT_ONCE]
    without = NoResendAfterTimeout.inapplicable(frozenset(Capability) - {Capability.AT_LEAST_ONCE})
    assert without[APPLIED_ONCE] == "the adapter declares no at least once"
    assert SENT_ONCE not in without
