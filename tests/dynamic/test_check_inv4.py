"""INV4 on hand-built traces: a timed-out delivery is sent once; a rejection spends the budget."""

from dyn_traces import K, Trace

from invariants.checks import inv4_no_resend_after_timeout as inv4
from invariants.checks.monitor import run_monitor


def _attempt(t: Trace, n: int, *, did: str = "d1") -> None:
    t.add(K.ATTEMPT, hub="router", delivery_id=did, target="g", attempt=n)


def _rejected_all_the_way(t: Trace, calls: int, did: str = "d1") -> None:
    delays = [250, 500, 1_000, 2_000, 3_000, 3_000, 3_000]
    for n in range(calls):
        _attempt(t, n, did=did)
        t.add(K.ATTEMPT_FAILED, hub="router", delivery_id=did, error="rejected", timed_out=False)
        if n < calls - 1:
            t.at(t.t + delays[n])


def test_rejection_spends_the_whole_budget_in_9750_ms_and_passes() -> None:
    t = Trace()
    _rejected_all_the_way(t, 7)
    assert t.t == 9_750
    assert inv4.check(t.events, now_ms=60_000, final=True) == []


def test_timeout_then_silence_with_one_call_passes() -> None:
    t = Trace()
    _attempt(t, 0)
    t.add(K.CALL_RECEIVED, hub="g", delivery_id="d1")
    t.at(30_000).add(K.ATTEMPT_FAILED, hub="router", delivery_id="d1", error="timeout",
                     timed_out=True)
    assert inv4.check(t.events, now_ms=100_000, final=True) == []


def test_resend_after_timeout_is_flagged_with_the_duplicate_call() -> None:
    t = Trace()
    _attempt(t, 0)
    t.add(K.CALL_RECEIVED, hub="g", delivery_id="d1")
    t.at(30_000).add(K.ATTEMPT_FAILED, hub="router", delivery_id="d1", error="timeout",
                     timed_out=True)
    t.at(30_250)
    _attempt(t, 1)
    t.add(K.CALL_RECEIVED, hub="g", delivery_id="d1")
    messages = [v.message for v in inv4.check(t.events)]
    assert any("re-sent after a timed-out attempt" in m for m in messages)
    assert any("reached the callee 2 times" in m for m in messages)


def _timed_out_and_answered(error: str) -> Trace:
    t = Trace()
    _attempt(t, 0)
    t.add(K.CALL_RECEIVED, hub="g", delivery_id="d1")
    t.at(30_000).add(K.ATTEMPT_FAILED, hub="router", delivery_id="d1",
                     error="aggregate(timeout, rejected)", timed_out=True)
    t.add(K.FAILURE_EMITTED, hub="router", delivery_id="n1", answers="d1", error=error)
    return t


def test_a_timed_out_delivery_is_answered_as_terminal() -> None:
    monitor = inv4.NoResendAfterTimeout()
    assert run_monitor(monitor, _timed_out_and_answered("Failed").events) == []
    assert monitor.evidence[inv4.TERMINAL] == 1
    # The negative control: a transient word for it (seed 000's classify, read at the root).
    for transient in ("Unavailable", "ShuttingDown"):
        [v] = inv4.check(_timed_out_and_answered(transient).events, final=True)
        assert v.message.startswith(f"delivery d1, whose call timed out, was answered "
                                    f"{transient}: a timeout is terminal")


def test_timeout_inside_an_aggregate_counts_as_a_timeout() -> None:
    t = Trace()
    _attempt(t, 0)
    t.add(K.ATTEMPT_FAILED, hub="router", delivery_id="d1",
          error="aggregate(rejected, timeout)", timed_out=True)
    t.at(250)
    _attempt(t, 1)
    [v] = inv4.check(t.events)
    assert "re-sent after a timed-out attempt" in v.message


def test_rejected_delivery_given_up_early_is_overdue() -> None:
    t = Trace()
    _rejected_all_the_way(t, 4)  # stopped after 3 retries
    last = t.t
    assert inv4.check(t.events, now_ms=last + 2_000) == []
    [v] = inv4.check(t.events, now_ms=last + 2_001)
    assert "not re-sent after attempt 4" in v.message


def test_no_retry_owed_once_the_stop_completed() -> None:
    t = Trace()
    _rejected_all_the_way(t, 2)
    t.add(K.STOP_COMPLETED, hub="silo")
    assert inv4.check(t.events, now_ms=t.t + 100_000) == []


def test_eighth_call_exceeds_the_budget() -> None:
    t = Trace()
    _rejected_all_the_way(t, 8)
    [v] = inv4.check(t.events)
    assert "attempted more than 7 times" in v.message


def test_retry_before_its_backoff_is_flagged() -> None:
    t = Trace()
    _attempt(t, 0)
    t.add(K.ATTEMPT_FAILED, hub="router", delivery_id="d1", error="rejected", timed_out=False)
    t.at(100)
    _attempt(t, 1)
    [v] = inv4.check(t.events)
    assert "backoff 250 ms" in v.message


def test_timed_out_delivery_never_received_is_unfinished() -> None:
    t = Trace()
    _attempt(t, 0)
    t.add(K.ATTEMPT_FAILED, hub="router", delivery_id="d1", error="timeout", timed_out=True)
    [v] = inv4.check(t.events, final=True)
    assert "reached the callee 0 times (expected 1)" in v.message


def test_no_retry_owed_once_the_stop_drained_the_leg() -> None:
    t = Trace()
    _rejected_all_the_way(t, 2)
    t.add(K.LEG_ENDED, leg_id="L1", delivery_id="d1", reason="drained")
    assert inv4.check(t.events, now_ms=t.t + 100_000) == []


def test_unknown_error_names_are_not_assumed_resendable() -> None:
    t = Trace()
    _attempt(t, 0)
    t.add(K.ATTEMPT_FAILED, hub="router", delivery_id="d1", error="TargetNotFoundError",
          timed_out=False)
    assert inv4.check(t.events, now_ms=100_000, final=True) == []


def test_rejected_delivery_answered_before_its_budget_is_spent_is_flagged() -> None:
    t = Trace()
    _rejected_all_the_way(t, 1)
    t.add(K.FAILURE_EMITTED, hub="grain", delivery_id="n1", answers="d1", error="Unavailable")
    t.add(K.LEG_ENDED, leg_id="L1", delivery_id="d1", reason="failed")
    [v] = inv4.check(t.events)
    assert "given up after 1 attempt(s)" in v.message
    assert v.seqs == (1, 2)


def test_rejection_answered_once_the_budget_is_spent_passes() -> None:
    t = Trace()
    _rejected_all_the_way(t, 7)
    t.add(K.FAILURE_EMITTED, hub="grain", delivery_id="n1", answers="d1", error="Unavailable")
    t.add(K.LEG_ENDED, leg_id="L1", delivery_id="d1", reason="failed")
    assert inv4.check(t.events, final=True) == []


def test_a_timeout_later_than_the_response_timeout_is_flagged() -> None:
    t = Trace()
    _attempt(t, 0)
    t.add(K.CALL_RECEIVED, hub="g", delivery_id="d1")
    t.at(30_001).add(K.ATTEMPT_FAILED, hub="router", delivery_id="d1", error="timeout",
                     timed_out=True)
    assert [v.message for v in inv4.check(t.events, now_ms=100_000, final=True)] == [
        "d1's attempt 0 timed out 30001 ms after it was sent, later than its response "
        "timeout of 30000 ms: the caller waited past it"]
