"""INV2 on hand-built traces: at most N+1 subscribe attempts, bounded time, then silence."""

from dyn_traces import K, Trace

from invariants.checks import DEFAULT_PARAMS, CheckParams
from invariants.checks import inv2_bounded_subscribe as inv2


def _attempts(t: Trace, n: int, sid: str = "s1", params: CheckParams = DEFAULT_PARAMS) -> None:
    """`n` attempts, each failing NotFound (emitted 1 ms later, handled by the subscriber
    1 ms after that) and each retry its backoff after the failure before it."""
    first = len([e for e in t.events if e.kind is K.SUBSCRIBE_ATTEMPT])
    for i in range(first, first + n):
        if i:
            t.at(t.t + params.subscribe_delay_ms(i))
        _attempt(t, i, sid)


def _attempt(t: Trace, i: int, sid: str = "s1", *, fails: bool = True) -> None:
    t.add(K.SUBSCRIBE_ATTEMPT, hub="sub", subscription_id=sid, attempt=i, delivery_id=f"r{i}")
    if fails:
        t.at(t.t + 1).add(K.FAILURE_EMITTED, hub="gone", delivery_id=f"f{i}",
                          answers=f"r{i}", error="NotFound")
        t.at(t.t + 1).add(K.HANDLED, hub="sub", delivery_id=f"f{i}")


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
    assert v.seqs == (0, 18)


def test_fewer_retries_configured_are_honoured() -> None:
    t = Trace()
    two = CheckParams(subscribe_retries=2)
    _attempts(t, 3, params=two)
    assert inv2.check(t.events, two) == []
    _attempts(t, 1, params=two)
    assert len(inv2.check(t.events, two)) == 1


def test_anything_sent_after_termination_is_flagged() -> None:
    t = Trace()
    _attempts(t, 2)
    t.add(K.SUBSCRIBE_TERMINATED, hub="sub", subscription_id="s1")
    t.add(K.POSTED, hub="sub", subscription_id="s1", delivery_id="late")
    [v] = inv2.check(t.events)
    assert "sent posted after it terminated" in v.message


NO_RETRIES = CheckParams(subscribe_retries=0)  # one attempt: nothing owed but the bound


def test_open_past_the_bound_is_overdue_but_not_before() -> None:
    t = Trace()
    _attempt(t.at(1_000), 0, fails=False)
    bound = NO_RETRIES.subscribe_bound_ms
    assert inv2.check(t.events, NO_RETRIES, now_ms=1_000 + bound) == []
    [v] = inv2.check(t.events, NO_RETRIES, now_ms=1_001 + bound)
    assert "neither answered nor terminated" in v.message


def test_termination_later_than_the_bound_is_flagged() -> None:
    t = Trace()
    _attempt(t.at(1_000), 0, fails=False)
    t.at(10_000_000).add(K.SUBSCRIBE_TERMINATED, hub="sub", subscription_id="s1")
    # Decided the moment virtual time passed the bound, before the late termination.
    [v] = inv2.check(t.events, NO_RETRIES)
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


# Resubscribe delays: 250 ms doubling after the failure each retry answers.


def test_retries_on_their_doubling_backoff_pass_and_are_counted() -> None:
    t = Trace()
    _attempts(t, 6)
    t.add(K.SUBSCRIBE_TERMINATED, hub="sub", subscription_id="s1")
    monitor = inv2.BoundedSubscribe()
    monitor.feed(t.events)
    assert monitor.violations(final=True) == []
    assert monitor.evidence[inv2.DELAYS] == 5
    # Attempt n comes 250 * 2^(n-1) ms after the failure of attempt n-1 was handled.
    times = [e.time_ms for e in t.events if e.kind is K.SUBSCRIBE_ATTEMPT]
    assert times == [0, 252, 754, 1756, 3758, 7760]


def test_a_flat_backoff_is_a_resubscribe_too_early() -> None:
    t = Trace()
    _attempts(t, 2)
    t.at(t.t + 250)  # the base delay again, where 500 ms are due
    _attempt(t, 2)
    [v] = inv2.check(t.events)
    assert "resubscribed (attempt 2) 251 ms after attempt 1 failed (backoff 500 ms)" in v.message
    assert [e.kind for e in v.events] == [K.SUBSCRIBE_ATTEMPT, K.FAILURE_EMITTED,
                                          K.SUBSCRIBE_ATTEMPT]


def test_a_resubscribe_later_than_its_backoff_is_overdue_the_moment_time_passes_it() -> None:
    t = Trace()
    _attempts(t, 1)  # failure handled at 2 ms: the retry is due at 252
    assert inv2.check(t.events, now_ms=252) == []
    [v] = inv2.check(t.events, now_ms=253)
    assert "not resubscribed within its backoff of 250 ms after attempt 0 failed at 2 ms" \
        in v.message
    # A retry that lands late, in the same step as the deadline, is still caught.
    _attempt(t.at(400), 1)
    [late] = inv2.check(t.events)
    assert late.message == v.message


def test_a_timed_out_attempt_is_retried_its_backoff_after_the_timeout() -> None:
    t = Trace()
    _attempt(t, 0, fails=False)
    timeout = CheckParams().subscribe_timeout_ms
    assert inv2.check(t.events, now_ms=timeout + 250) == []
    assert len(inv2.check(t.events, now_ms=timeout + 251)) == 1
    early = Trace()
    _attempt(early, 0, fails=False)
    _attempt(early.at(timeout + 249), 1)
    [v] = inv2.check(early.events)
    assert "resubscribed (attempt 1) 249 ms after attempt 0 failed (backoff 250 ms)" \
        in v.message
    _attempt(t.at(timeout + 250), 1)
    assert inv2.check(t.events) == []


def test_the_configured_backoff_is_the_one_held() -> None:
    flat = CheckParams(subscribe_backoff_ms=100, subscribe_backoff_factor=1)
    t = Trace()
    _attempts(t, 4, params=flat)
    assert inv2.check(t.events, flat) == []
    assert len(inv2.check(t.events)) == 3  # held to 250 ms doubling, each retry is early


def test_a_failure_answering_an_earlier_attempt_does_not_move_the_due_time() -> None:
    t = Trace()
    _attempt(t, 0, fails=False)
    _attempt(t.at(30_250), 1, fails=False)
    # The first request's failure lands late, after its attempt was given up on.
    t.at(30_300).add(K.FAILURE_EMITTED, hub="gone", delivery_id="f0", answers="r0")
    t.at(30_301).add(K.HANDLED, hub="sub", delivery_id="f0")
    _attempt(t.at(30_551), 2)
    [v] = inv2.check(t.events)
    assert "resubscribed (attempt 2) before attempt 1 failed or timed out" in v.message


def test_a_subscription_to_a_live_hub_is_owed_its_answer() -> None:
    from invariants.adapter import FaultKind
    from invariants.checks import Injected, Subscribed
    from invariants.checks.harness_facts import NetworkHeld

    def run(answered: bool, *, removed: bool = False, held: bool = False) -> list[str]:
        t = Trace()
        t.add(K.HUB_CREATED, hub="h0")
        facts: list[object] = [Subscribed("s1", "client", "h0", 0, 0, len(t.events))]
        if removed:
            facts.append(Injected(FaultKind.REMOVE_TARGET, "h0", 1, 0, 0, len(t.events)))
        if held:  # the network's verdicts held a segment: its attempts may all be lost
            facts.append(NetworkHeld(0, len(t.events)))
        _attempt(t, 0, fails=False)
        if answered:
            t.add(K.SUBSCRIBE_ANSWERED, hub="client", subscription_id="s1", attempt=0)
        else:
            t.add(K.SUBSCRIBE_TERMINATED, hub="client", subscription_id="s1",
                  reason="retries_exhausted:timeout")
        params = CheckParams(subscribe_retries=0)
        return [v.message for v in inv2.check(t.events, params, final=True,
                                                facts=facts)]  # type: ignore[arg-type]

    assert run(True) == []
    assert run(False) == [
        "subscription s1 from client to h0, which exists and was neither removed, "
        "blocked nor slowed, was never answered: it terminated (retries_exhausted:timeout) after 1 "
        "attempt(s)"]
    assert run(False, removed=True) == []
    assert run(False, held=True) == []


def _stopping(t: Trace, *, ended: bool, ended_first: bool = False) -> list[object]:
    """s1's attempt 0 fails, then the harness stops the silo while s1 waits out its 250 ms
    backoff; the stop completes at 100 ms (s1 terminated there when `ended`, before the
    STOP_COMPLETED record when `ended_first`, as a mesh ending its subscriptions in a
    stage does)."""
    from invariants.checks import StopAsked

    _attempt(t, 0)
    t.at(100)
    facts: list[object] = [StopAsked(True, 100, len(t.events))]
    t.add(K.STOP_REQUESTED, hub="silo", graceful=True)
    if ended and ended_first:
        t.add(K.SUBSCRIBE_TERMINATED, hub="sub", subscription_id="s1", reason="silo_stopped")
    t.add(K.STOP_COMPLETED, hub="silo")
    if ended and not ended_first:
        t.add(K.SUBSCRIBE_TERMINATED, hub="sub", subscription_id="s1", reason="silo_stopped")
    return facts


def _judged(t: Trace, facts: list[object]) -> tuple[list[str], int]:
    from invariants.checks.monitor import run_monitor

    monitor = inv2.BoundedSubscribe()
    found = run_monitor(monitor, t.events, final=True, facts=facts)  # type: ignore[arg-type]
    return [v.message for v in found], monitor.evidence[inv2.STOP_BACKOFF]


def test_a_subscription_in_backoff_ends_with_the_silo() -> None:
    for ended_first in (False, True):
        t = Trace()
        facts = _stopping(t, ended=True, ended_first=ended_first)
        t.at(31_000).add(K.TURN_BLOCKED, hub="h0")  # time goes on after the stop
        assert _judged(t, facts) == ([], 1)


def test_a_subscription_in_backoff_that_outlives_the_stop_is_flagged() -> None:
    t = Trace()
    facts = _stopping(t, ended=False)
    _attempt(t.at(252), 1)  # its retry, on a stopped silo
    found, _ = _judged(t, facts)
    assert {
        "subscription s1 sent subscribe_attempt after the stop completed at 100 ms: it "
        "outlived the silo",
        "subscription s1, open (waiting out its backoff after attempt 0 failed) when the "
        "stop completed at 100 ms, was not terminated with the silo",
    } <= set(found)


def test_a_send_in_the_stops_own_instant_after_it_completed_is_flagged() -> None:
    t = Trace()
    facts = _stopping(t, ended=False)
    _attempt(t, 1, fails=False)  # at 100 ms, after STOP_COMPLETED (and early, too)
    t.add(K.SUBSCRIBE_TERMINATED, hub="sub", subscription_id="s1", reason="silo_stopped")
    found, _ = _judged(t, facts)
    assert "subscription s1 sent subscribe_attempt after the stop completed at 100 ms: it " \
        "outlived the silo" in found
    assert not any("not terminated with the silo" in v for v in found)


def test_a_subscription_started_once_the_silo_stopped_is_not_the_stops() -> None:
    t = Trace()
    t.add(K.STOP_COMPLETED, hub="silo")
    _attempts(t.at(10), 6)
    t.add(K.SUBSCRIBE_TERMINATED, hub="sub", subscription_id="s1")
    assert _judged(t, []) == ([], 0)


# An attempt that timed out stays timed out.


def _answered_at(ms: int) -> tuple[list[str], int]:
    t = Trace()
    t.add(K.SUBSCRIBE_ATTEMPT, hub="sub", subscription_id="s1", attempt=0, delivery_id="r0")
    t.at(ms).add(K.SUBSCRIBE_ANSWERED, hub="sub", subscription_id="s1", attempt=0)
    monitor = inv2.BoundedSubscribe()
    monitor.feed(t.events)
    return [v.message for v in monitor.violations(final=True)], monitor.evidence[inv2.LATE]


def test_an_answer_after_its_attempt_timed_out_is_not_taken() -> None:
    assert _answered_at(30_000) == ([], 0)  # in the timeout's own millisecond: in time
    assert _answered_at(30_100) == ([
        "subscription s1 took an answer at 30100 ms, after its attempt 0 timed out (sent at "
        "0 ms, timeout 30000 ms): a late answer to a request it had given up on"], 1)


def test_a_timed_out_attempt_followed_by_its_retry_is_counted() -> None:
    t = Trace()
    t.add(K.SUBSCRIBE_ATTEMPT, hub="sub", subscription_id="s1", attempt=0, delivery_id="r0")
    t.at(30_250).add(K.SUBSCRIBE_ATTEMPT, hub="sub", subscription_id="s1", attempt=1,
                     delivery_id="r1")
    t.at(30_252).add(K.SUBSCRIBE_ANSWERED, hub="sub", subscription_id="s1", attempt=1)
    monitor = inv2.BoundedSubscribe()
    monitor.feed(t.events)
    assert monitor.violations(final=True) == []
    assert monitor.evidence[inv2.LATE] == 1


def _late_failure_of_attempt_0(handled_by: str) -> Trace:
    """Attempt 0 fails NotFound at 1 ms, the failure handled only at 2,100 ms (the
    subscriber's turn held), after attempt 1 was sent on its timeout; attempt 1 fails at
    2,101 ms, handled at 2,102 ms; attempt 2 comes its backoff after that."""
    t = Trace()
    t.add(K.SUBSCRIBE_ATTEMPT, hub="sub", subscription_id="s1", attempt=0, delivery_id="r0")
    t.at(1).add(K.FAILURE_EMITTED, hub="gone", delivery_id="f0", answers="r0",
                error="NotFound")
    t.at(2_100).add(K.SUBSCRIBE_ATTEMPT, hub="sub", subscription_id="s1", attempt=1,
                    delivery_id="r1")
    t.add(K.HANDLED, hub=handled_by, delivery_id="f0")
    t.at(2_101).add(K.FAILURE_EMITTED, hub="gone", delivery_id="f1", answers="r1",
                    error="NotFound")
    t.at(2_102).add(K.HANDLED, hub="sub", delivery_id="f1")
    return t


def test_a_late_failure_handled_after_the_next_attempt_does_not_time_that_attempt() -> None:
    params = CheckParams(subscribe_timeout_ms=2_000, subscribe_backoff_ms=250)
    t = _late_failure_of_attempt_0("sub")
    t.at(2_602).add(K.SUBSCRIBE_ATTEMPT, hub="sub", subscription_id="s1", attempt=2,
                    delivery_id="r2")
    # Attempt 2 at 2,602 ms: attempt 1's failure was handled at 2,102 ms, its backoff 500 ms
    # (attempt 0's failure, handled at 2,100 ms after attempt 1 was sent, times nothing).
    assert inv2.check(t.events, params=params, now_ms=t.t) == []
    # Negative control: a retry short of that backoff after attempt 1's failure is early.
    early = _late_failure_of_attempt_0("sub")
    early.at(2_600).add(K.SUBSCRIBE_ATTEMPT, hub="sub", subscription_id="s1", attempt=2,
                        delivery_id="r2")
    [v] = inv2.check(early.events, params=params, now_ms=early.t)
    assert "resubscribed (attempt 2) 499 ms after attempt 1 failed" in v.message


def test_a_failure_handled_on_its_way_is_not_the_subscriber_learning_it() -> None:
    # The answer to attempt 0 is handled by a reply desk at 1 ms on its way: the subscriber
    # has not learnt of it, so its retry on the timeout is no late one.
    params = CheckParams(subscribe_timeout_ms=2_000, subscribe_backoff_ms=250)
    t = Trace()
    t.add(K.SUBSCRIBE_ATTEMPT, hub="sub", subscription_id="s1", attempt=0, delivery_id="r0")
    t.at(1).add(K.FAILURE_EMITTED, hub="gone", delivery_id="f0", answers="r0",
                error="NotFound")
    t.at(2).add(K.HANDLED, hub="desk", delivery_id="f0")
    t.at(2_250).add(K.SUBSCRIBE_ATTEMPT, hub="sub", subscription_id="s1", attempt=1,
                    delivery_id="r1")
    assert inv2.check(t.events, params=params, now_ms=t.t) == []
    # Negative control: handled by the subscriber at 2 ms, the retry is overdue long before.
    t2 = Trace()
    t2.add(K.SUBSCRIBE_ATTEMPT, hub="sub", subscription_id="s1", attempt=0, delivery_id="r0")
    t2.at(1).add(K.FAILURE_EMITTED, hub="gone", delivery_id="f0", answers="r0",
                 error="NotFound")
    t2.at(2).add(K.HANDLED, hub="sub", delivery_id="f0")
    [v] = inv2.check(t2.events, params=params, now_ms=2_250)
    assert "not resubscribed within its backoff of 250 ms" in v.message


# A mesh that declares late answers taken (`late_subscribe_answers = "taken"`).

TAKEN = CheckParams(late_subscribe_answers="taken")


def test_a_mesh_that_takes_late_answers_is_judged_by_its_policy() -> None:
    t = Trace()
    t.add(K.SUBSCRIBE_ATTEMPT, hub="sub", subscription_id="s1", attempt=0, delivery_id="r0")
    t.at(30_100).add(K.SUBSCRIBE_ANSWERED, hub="sub", subscription_id="s1", attempt=0)
    assert inv2.check(t.events, params=TAKEN, final=True) == []
    assert inv2.BoundedSubscribe.inapplicable(frozenset(), TAKEN)[inv2.LATE] == (
        "late_subscribe_answers = 'taken': the mesh takes an answer to an attempt that timed "
        "out, by design")
    # the control: the reference's policy holds the same trace to its obligation
    assert len(inv2.check(t.events, final=True)) == 1
    assert inv2.LATE not in inv2.BoundedSubscribe.inapplicable(frozenset(), CheckParams())


def test_a_late_failure_may_start_the_backoff_when_late_answers_are_taken() -> None:
    timeout = TAKEN.subscribe_timeout_ms
    t = Trace()
    _attempt(t, 0, fails=False)
    # the failure lands 100 ms after the attempt timed out, while the subscription waits
    # out its backoff, and starts it afresh: the retry comes 250 ms after the failure, later
    # than the timeout plus the backoff (never more sends)
    t.at(timeout + 100).add(K.FAILURE_EMITTED, hub="gone", delivery_id="f0", answers="r0",
                            error="NotFound")
    t.at(timeout + 101).add(K.HANDLED, hub="sub", delivery_id="f0")
    _attempt(t.at(timeout + 351), 1)
    assert inv2.check(t.events, params=TAKEN) == []
    # the control: under the reference's policy the retry was due 250 ms after the timeout
    [late] = inv2.check(t.events)
    assert late.message.startswith("subscription s1 not resubscribed within its backoff of "
                                   "250 ms after attempt 0 failed at 30000 ms")
    # and under "taken" a retry later still than the late failure's backoff is overdue
    slow = Trace()
    _attempt(slow, 0, fails=False)
    slow.at(timeout + 100).add(K.FAILURE_EMITTED, hub="gone", delivery_id="f0", answers="r0",
                               error="NotFound")
    slow.at(timeout + 101).add(K.HANDLED, hub="sub", delivery_id="f0")
    _attempt(slow.at(timeout + 2_000), 1)
    assert len(inv2.check(slow.events, params=TAKEN)) == 1


def test_a_subscription_open_when_the_harness_crashed_a_node_owes_no_end() -> None:
    """A crash leaves no word: a subscription open at it, or made while the node is down,
    may have been lost with its subscriber (the harness knows which node it crashed, not
    which hubs it hosted), so its silence is no violation; what it does once heard from
    again is judged as usual. The controls: the same silence with no crash, and a
    subscription made after the node is back."""
    from invariants.adapter import FaultKind
    from invariants.checks import Injected, Subscribed

    def run(crash_at: int | None, *, quiet: str = "s1", again: bool = False,
            landed: bool = False) -> list[str]:
        t = Trace()
        t.add(K.HUB_CREATED, hub="h0")
        facts: list[object] = [Subscribed("s1", "client", "h0", 0, 0, len(t.events))]
        if quiet != "s1":
            _attempt(t, 0)  # s1 heard from: it waits out its backoff
        if crash_at is not None:
            t.at(crash_at)
            facts.append(Injected(FaultKind.CRASH_NODE, "h0", 1, 3_000, crash_at,
                                  len(t.events)))
        if quiet == "s2":
            t.at(5_000)
            facts.append(Subscribed("s2", "client", "h0", 0, 5_000, len(t.events)))
        if again:  # heard from after the crash: more attempts than its retries
            _attempts(t.at(6_000), 2, params=CheckParams(subscribe_retries=0))
        if landed:  # its request, on the wire at the crash, lands at its target later
            t.at(1_500).add(K.POSTED, hub="h0", subscription_id="s1", delivery_id="r0")
        return [v.message
                for v in inv2.check(t.events, CheckParams(subscribe_retries=0), final=True,
                                    facts=facts)]  # type: ignore[arg-type]

    silent = "the harness subscribed {} (client -> h0) at {} ms, but the trace shows nothing " \
        "of it within its bound of 30000 ms"
    unanswered = "subscription s1 from client to h0, which exists and was neither removed, " \
        "blocked nor slowed, was never answered"
    assert run(None) == [silent.format("s1", 0), unanswered]
    assert run(0) == []
    assert run(None, quiet="backoff") == ["subscription s1 still open at quiescence", unanswered]
    assert run(1, quiet="backoff") == []
    assert run(1, quiet="s2") == [silent.format("s2", 5000)]
    # the subscriber is not heard from by its request landing where it went
    assert run(1, quiet="backoff", landed=True) == []
    assert run(1, quiet="backoff", again=True) == [
        "subscription s1 made more than 1 attempts (0 retries)",
        "subscription s1 still open at quiescence"]
