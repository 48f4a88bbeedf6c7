"""INV4 on a mesh with a simulated network (an adapter declaring `network`): a request may
wait for its link before it leaves; and once the harness's own network verdicts held a
segment (`NetworkHeld`) or it injected a network fault, a call may be lost on the way or
fail before it reaches the callee. Each rule with its controls: no network, and a
network that held nothing."""

from __future__ import annotations

from collections.abc import Sequence

from dyn_traces import K, Trace

from invariants.adapter import Capability, FaultKind
from invariants.capabilities import DEFAULT_CAPABILITIES
from invariants.checks import CheckParams, monitor_for
from invariants.checks.harness_facts import HarnessFact, Injected, NetworkHeld
from invariants.checks.monitor import run_monitor

HELD = NetworkHeld(0, 0)  # the harness's verdicts held a segment, from the start
PARAMS = CheckParams(response_timeout_ms=2_000, resendable_errors=frozenset({"Rejected"}))
NETWORKED = DEFAULT_CAPABILITIES | {Capability.NETWORK}


def _found(t: Trace, capabilities: frozenset[Capability],
           facts: Sequence[HarnessFact] = ()) -> list[str]:
    monitor = monitor_for("INV4", PARAMS, capabilities)
    return [v.message for v in run_monitor(monitor, t.events, now_ms=60_000, final=True,
                                           facts=facts)]


def _received_at_1_s_timed_out_at(failed_at: int) -> Trace:
    """A call that waited a second for its link (a dial) before it reached the callee."""
    t = Trace()
    t.add(K.ATTEMPT, hub="gw", delivery_id="d1", target="g", attempt=0)
    t.at(1_000).add(K.CALL_RECEIVED, hub="g", delivery_id="d1")
    t.at(failed_at).add(K.ATTEMPT_FAILED, hub="gw", delivery_id="d1", error="TimedOut",
                        timed_out=True)
    return t


def test_a_request_that_waited_for_its_link_is_timed_from_its_arrival() -> None:
    t = _received_at_1_s_timed_out_at(2_900)
    assert _found(t, NETWORKED) == []
    # The control: a caller that sends at once waited 2,900 ms on a 2,000 ms timeout.
    assert _found(t, DEFAULT_CAPABILITIES) == [
        "d1's attempt 0 timed out 2900 ms after it was sent, later than its response "
        "timeout of 2000 ms: the caller waited past it"]


def test_a_timeout_past_the_arrival_by_more_than_the_timeout_is_still_flagged() -> None:
    assert _found(_received_at_1_s_timed_out_at(3_001), NETWORKED) == [
        "d1's attempt 0 timed out 2001 ms after it reached the callee, later than its "
        "response timeout of 2000 ms: the caller waited past it"]


def test_a_call_lost_on_the_way_times_out_having_reached_no_callee() -> None:
    t = Trace()
    t.add(K.ATTEMPT, hub="gw", delivery_id="d1", target="g", attempt=0)
    t.at(2_000).add(K.ATTEMPT_FAILED, hub="gw", delivery_id="d1", error="TimedOut",
                    timed_out=True)
    assert _found(t, NETWORKED, [HELD]) == []
    for capabilities in (DEFAULT_CAPABILITIES, NETWORKED):  # nothing held: nothing lost
        [control] = _found(t, capabilities)
        assert "reached the callee 0 times (expected 1)" in control


def test_a_dial_that_failed_long_after_the_call_began_is_not_taken_for_a_timeout() -> None:
    t = Trace()
    t.add(K.ATTEMPT, hub="gw", delivery_id="d1", target="g", attempt=0)
    t.at(3_000).add(K.ATTEMPT_FAILED, hub="gw", delivery_id="d1", error="Unreachable",
                    timed_out=False)  # two dials queued ahead of its own, each refused
    assert _found(t, NETWORKED) == []
    assert any("that is a response timeout" in v for v in _found(t, DEFAULT_CAPABILITIES))


def test_an_armed_rejection_the_network_may_have_pre_empted_owes_no_retry() -> None:
    armed = Injected(FaultKind.REJECT_NEXT, "g", 1, 0, 0, 0)
    t = Trace()
    t.add(K.ATTEMPT, hub="gw", delivery_id="d1", target="g", attempt=0)
    t.at(1_000).add(K.ATTEMPT_FAILED, hub="gw", delivery_id="d1", error="Unreachable",
                    timed_out=False)
    t.add(K.FAILURE_EMITTED, hub="gw", delivery_id="n1", answers="d1", error="Unreachable")
    assert _found(t, NETWORKED, [armed, HELD]) == []
    # The controls: without a network, or on one that held nothing, only the armed
    # rejection can have failed the call, and a rejection is re-sent to the budget.
    for capabilities in (DEFAULT_CAPABILITIES, NETWORKED):
        assert any("given up after 1 attempt(s)" in v
                   for v in _found(t, capabilities, [armed]))


def test_an_armed_rejection_a_stop_may_have_pre_empted_owes_no_retry() -> None:
    """Once the harness asked for the stop, a callee that stopped fails a call by itself:
    a failure that is not one of the mesh's re-sendable errors is not the armed
    rejection. The control: the same call with no stop asked."""
    from invariants.checks.harness_facts import StopAsked

    armed = Injected(FaultKind.REJECT_NEXT, "g", 1, 0, 0, 0)
    t = Trace()
    t.add(K.ATTEMPT, hub="gw", delivery_id="d1", target="g", attempt=0)
    t.at(2).add(K.ATTEMPT_FAILED, hub="gw", delivery_id="d1", error="Unreachable",
                timed_out=False)
    t.add(K.FAILURE_EMITTED, hub="gw", delivery_id="n1", answers="d1", error="Unreachable")
    assert _found(t, NETWORKED, [armed, StopAsked(True, 0, 1)]) == []
    assert any("given up after 1 attempt(s)" in v for v in _found(t, NETWORKED, [armed]))


def test_a_retry_due_after_the_harness_crashed_a_node_is_owed_no_more() -> None:
    """A crash leaves no word, and the harness does not know which node the caller was
    on: a retry of a refused call falling due once a node crashed may have been lost with
    its caller. The controls: no crash, and a crash before the refusal (the retry owed
    then, by a caller that was not on the crashed node or was rebuilt)."""
    armed = Injected(FaultKind.REJECT_NEXT, "g", 1, 0, 0, 0)

    def found(crash_at: int | None) -> list[str]:
        t = Trace()
        facts: list[HarnessFact] = [armed]
        if crash_at == 0:
            facts.append(Injected(FaultKind.CRASH_NODE, "h", 1, 100, 0, 0))
        t.at(200).add(K.ATTEMPT, hub="gw", delivery_id="d1", target="g", attempt=0)
        t.at(202).add(K.ATTEMPT_FAILED, hub="gw", delivery_id="d1", error="Rejected",
                      timed_out=False)
        if crash_at == 300:
            facts.append(Injected(FaultKind.CRASH_NODE, "h", 1, 100, 300, len(t.events)))
        return _found(t, NETWORKED, facts)

    owed = ("rejected delivery d1 not re-sent after attempt 1 within its backoff of 250 ms "
            "(budget of 6 retries not spent)")
    assert found(None) == [owed]
    assert found(0) == [owed]
    assert found(300) == []


def test_a_held_call_whose_caller_a_crash_may_have_taken_is_not_judged_still_waiting() -> None:
    """A timeout armed at the callee is honoured by holding the call until its caller gave
    up; a caller a crash took never gives up in the trace. Once the harness crashed a node
    after the call left, its caller may be gone: running the call then is no fault ignored.
    The control: the same call with no crash."""
    armed = Injected(FaultKind.TIMEOUT_NEXT, "g", 2, 0, 0, 0)

    def found(crashed: bool) -> list[str]:
        t = Trace()
        facts: list[HarnessFact] = [armed]
        # d0 spends the first: held until its caller gave up (the mesh honours the kind).
        t.add(K.ATTEMPT, hub="gw", delivery_id="d0", target="g", attempt=0)
        t.add(K.CALL_RECEIVED, hub="g", delivery_id="d0")
        t.at(2_000).add(K.ATTEMPT_FAILED, hub="gw", delivery_id="d0", error="TimedOut",
                        timed_out=True)
        t.add(K.POSTED, hub="g", delivery_id="d0")
        t.add(K.ATTEMPT, hub="gw", delivery_id="d1", target="g", attempt=0)
        if crashed:
            facts.append(Injected(FaultKind.CRASH_NODE, "h", 1, 100, 2_010, len(t.events)))
        t.at(3_000).add(K.CALL_RECEIVED, hub="g", delivery_id="d1")
        t.at(5_100).add(K.POSTED, hub="g", delivery_id="d1")
        return _found(t, NETWORKED, facts)

    assert found(crashed=True) == []
    assert found(crashed=False) == [
        "the harness armed timeout_next at g, but d1's call ran at the callee 3100 ms after it "
        "was sent, its caller still waiting: the fault was not honoured"]
