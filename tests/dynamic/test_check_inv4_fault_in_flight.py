"""INV4 with a timeout armed while a call to its target was on its way: a mesh may spend it
on that call, which reaches the callee first (the reference spends at the callee), or on
the next call made after the arming (a mesh asking the kit's `point()` as each call
leaves). Either is honouring the fault; a timeout neither explains is still flagged."""

from __future__ import annotations

from dyn_traces import K, Trace

from invariants.adapter import FaultKind, Route
from invariants.checks import inv4_no_resend_after_timeout as inv4
from invariants.checks.harness_facts import Injected, Posted
from invariants.trace import MessageClass
from reference_impl.constants import RESPONSE_TIMEOUT_MS

UNPROVOKED = "timed out, but the harness armed no timeout at g"
IGNORED = "the harness armed timeout_next at g"


def _posted(did: str, seq: int, target: str = "g") -> Posted:
    return Posted(did, "client", target, "Request", MessageClass.USER, None, "user",
                  Route.GRAIN, 0, seq)


def _two_calls(*, made_before_arming: int, first_times_out: bool, second_times_out: bool,
               overtaken: bool = False) -> tuple[Trace, list[object]]:
    """d1 then d2 sent to g, the first `made_before_arming` of them before a timeout was
    armed at g; d1 reaches g first, then d2 (d2 first if `overtaken`); each either runs
    at g or times out."""
    t = Trace()
    armed = Injected(FaultKind.TIMEOUT_NEXT, "g", 1, 0, 0, made_before_arming)
    for did in ("d1", "d2"):
        t.add(K.ATTEMPT, hub="router", delivery_id=did, target="g", attempt=0)
    arrivals = [("d1", first_times_out), ("d2", second_times_out)]
    for did, times_out in reversed(arrivals) if overtaken else arrivals:
        t.at(2).add(K.CALL_RECEIVED, hub="g", delivery_id=did, attempt=0)
        if not times_out:
            t.add(K.POSTED, hub="g", delivery_id=did)
    for did, times_out in arrivals:
        if times_out:
            t.at(RESPONSE_TIMEOUT_MS).add(K.ATTEMPT_FAILED, hub="router", delivery_id=did,
                                          attempt=0, error="timeout", timed_out=True)
    return t, [_posted("d1", 0), _posted("d2", 1), armed]


def _messages(t: Trace, facts: list[object]) -> list[str]:
    return [v.message for v in inv4.check(t.events, facts=facts)]  # type: ignore[arg-type]


def test_a_timeout_spent_on_the_next_call_made_after_the_arming_is_honoured() -> None:
    t, facts = _two_calls(made_before_arming=1, first_times_out=False,
                          second_times_out=True)
    assert _messages(t, facts) == []


def test_a_timeout_spent_on_the_call_on_its_way_when_armed_is_honoured() -> None:
    t, facts = _two_calls(made_before_arming=1, first_times_out=True,
                          second_times_out=False)
    assert _messages(t, facts) == []


def test_a_timeout_spent_on_the_first_call_made_after_the_arming_when_overtaken() -> None:
    # Both made after the arming; d2 overtakes d1 on the way: the first made takes it.
    t, facts = _two_calls(made_before_arming=0, first_times_out=True,
                          second_times_out=False, overtaken=True)
    assert _messages(t, facts) == []


def test_a_timeout_neither_way_of_spending_explains_is_flagged() -> None:
    # Both calls were on their way when the timeout was armed: the first to reach g may
    # take it, the second may not (it was not made after the arming).
    t, facts = _two_calls(made_before_arming=2, first_times_out=False,
                          second_times_out=True)
    assert any(UNPROVOKED in m and m.startswith("d2") for m in _messages(t, facts))


def test_one_timeout_armed_cannot_time_out_both_calls() -> None:
    t, facts = _two_calls(made_before_arming=1, first_times_out=True,
                          second_times_out=True)
    assert any(UNPROVOKED in m for m in _messages(t, facts))


def test_a_timeout_armed_before_the_call_was_made_and_ignored_is_still_flagged() -> None:
    # Two armed before either call was made: whichever way the mesh spends them, one is
    # d1's, which runs at g while its caller waits, though d0's timed out as armed.
    t = Trace()
    armed = Injected(FaultKind.TIMEOUT_NEXT, "g", 2, 0, 0, 0)
    for did in ("d0", "d1"):
        t.add(K.ATTEMPT, hub="router", delivery_id=did, target="g", attempt=0)
        t.at(2).add(K.CALL_RECEIVED, hub="g", delivery_id=did, attempt=0)
    t.add(K.POSTED, hub="g", delivery_id="d1")
    t.at(RESPONSE_TIMEOUT_MS).add(K.ATTEMPT_FAILED, hub="router", delivery_id="d0",
                                  attempt=0, error="timeout", timed_out=True)
    facts = [armed, _posted("d0", 0), _posted("d1", 2)]
    [ignored] = inv4.check(t.events, facts=facts, final=True)  # type: ignore[arg-type]
    assert IGNORED in ignored.message and "d1's call ran at the callee" in ignored.message


def _overtaken_then_a_third_call(*, first_runs: bool) -> list[str]:
    """One timeout armed at g, then d1 and d2 sent; d2 reaches g first, then d1, then d2
    runs, and d1 (unless `first_runs`) times out; then d3, sent later, reaches g and runs.
    A mesh spending as calls leave gave the timeout to d1; the book first gave it to d2.
    Beside them a timeout armed at h times out e1 as armed (the mesh honours timeouts)."""
    t = Trace()
    facts: list[object] = [Injected(FaultKind.TIMEOUT_NEXT, "g", 1, 0, 0, 0),
                           Injected(FaultKind.TIMEOUT_NEXT, "h", 1, 0, 0, 0)]
    for did, target in (("d1", "g"), ("d2", "g"), ("e1", "h")):
        facts.append(_posted(did, len(t.events), target))
        t.add(K.ATTEMPT, hub="router", delivery_id=did, target=target, attempt=0)
    t.at(2).add(K.CALL_RECEIVED, hub="g", delivery_id="d2", attempt=0)
    t.add(K.CALL_RECEIVED, hub="g", delivery_id="d1", attempt=0)
    t.add(K.POSTED, hub="g", delivery_id="d2")
    t.add(K.CALL_RECEIVED, hub="h", delivery_id="e1", attempt=0)
    if first_runs:
        t.add(K.POSTED, hub="g", delivery_id="d1")
    facts.append(_posted("d3", len(t.events)))
    t.at(5).add(K.ATTEMPT, hub="router", delivery_id="d3", target="g", attempt=0)
    t.at(7).add(K.CALL_RECEIVED, hub="g", delivery_id="d3", attempt=0)
    t.add(K.POSTED, hub="g", delivery_id="d3")
    t.at(RESPONSE_TIMEOUT_MS)
    for did in ("e1",) if first_runs else ("d1", "e1"):
        t.add(K.ATTEMPT_FAILED, hub="router", delivery_id=did, attempt=0, error="timeout",
              timed_out=True)
    found = inv4.check(t.events, facts=facts, final=True)  # type: ignore[arg-type]
    return [v.message for v in found]


def test_a_timeout_passed_over_goes_to_the_call_that_reached_the_callee_and_waits() -> None:
    # d1 reached g before d3 was made and never ran: the passed-over timeout is d1's, so
    # d3 running is no ignored fault, and d1's timeout is no unprovoked one.
    assert _overtaken_then_a_third_call(first_runs=False) == []


def test_a_timeout_passed_over_by_calls_that_all_ran_is_still_flagged() -> None:
    # Control: d1 ran too, so the mesh spent g's timeout on none of them.
    messages = _overtaken_then_a_third_call(first_runs=True)
    assert any(IGNORED in m and "d3's call ran" in m for m in messages), messages
