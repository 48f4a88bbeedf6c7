"""INV2 on hand-built traces: at most N+1 subscribe attempts, bounded time, then silence."""

from dyn_traces import K, Trace

from invariants.checks import CheckParams
from invariants.checks import inv2_bounded_subscribe as inv2


def _attempts(t: Trace, n: int, sid: str = "s1", step_ms: int = 1_000) -> None:
    for i in range(n):
        t.at(t.t + step_ms).add(K.SUBSCRIBE_ATTEMPT, hub="sub", subscription_id=sid, attempt=i)


def test_six_attempts_then_termination_passes() -> None:
    t = Trace()
    _attempts(t, 6)
    t.add(K.SUBSCRIBE_TERMINATED, hub="sub", subscription_id="s1", error="NotFound")
    assert inv2.check(t.events, final=True) == []


def test_answered_subscription_passes() -> None:
    t = Trace()
    _attempts(t, 2)
    t.add(K.SUBSCRIBE_ANSWERED, hub="sub", subscription_id="s1")
    assert inv2.check(t.events, final=True) == []


def test_seventh_attempt_is_flagged() -> None:
    t = Trace()
    _attempts(t, 7)
    [v] = inv2.check(t.events)
    assert "more than 6 attempts" in v.message
    assert v.seqs == (0, 6)


def test_fewer_retries_configured_are_honoured() -> None:
    t = Trace()
    _attempts(t, 3)
    assert inv2.check(t.events, CheckParams(subscribe_retries=2)) == []
    _attempts(t, 1)
    assert len(inv2.check(t.events, CheckParams(subscribe_retries=2))) == 1


def test_anything_sent_after_termination_is_flagged() -> None:
    t = Trace()
    _attempts(t, 2)
    t.add(K.SUBSCRIBE_TERMINATED, hub="sub", subscription_id="s1")
    t.add(K.POSTED, hub="sub", subscription_id="s1", delivery_id="late")
    [v] = inv2.check(t.events)
    assert "sent posted after it terminated" in v.message


def test_open_past_the_bound_is_overdue_but_not_before() -> None:
    t = Trace()
    _attempts(t, 1)
    bound = CheckParams().subscribe_bound_ms
    assert inv2.check(t.events, now_ms=1_000 + bound) == []
    [v] = inv2.check(t.events, now_ms=1_001 + bound)
    assert "neither answered nor terminated" in v.message


def test_termination_later_than_the_bound_is_flagged() -> None:
    t = Trace()
    _attempts(t, 1)
    t.at(10_000_000).add(K.SUBSCRIBE_TERMINATED, hub="sub", subscription_id="s1")
    # Decided the moment virtual time passed the bound, before the late termination.
    [v] = inv2.check(t.events)
    assert "neither answered nor terminated 9999000 ms after it started" in v.message


def test_open_subscription_at_quiescence_is_unfinished() -> None:
    t = Trace()
    _attempts(t, 1)
    assert inv2.check(t.events) == []
    [v] = inv2.check(t.events, final=True)
    assert "still open at quiescence" in v.message


def test_an_earlier_request_landing_late_is_not_a_new_send() -> None:
    t = Trace()
    t.add(K.SUBSCRIBE_ATTEMPT, hub="sub", subscription_id="s1", attempt=0, delivery_id="r1")
    t.add(K.SUBSCRIBE_TERMINATED, hub="sub", subscription_id="s1")
    t.add(K.POSTED, hub="slow", subscription_id="s1", delivery_id="r1")
    assert inv2.check(t.events) == []
    t.add(K.POSTED, hub="slow", subscription_id="s1", delivery_id="r2")
    [v] = inv2.check(t.events)
    assert "sent posted after it terminated" in v.message
