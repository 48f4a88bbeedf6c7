"""INV1 on a mesh with a simulated network: the rejecting node's word may be held past its
caller's response timeout, and the caller then answers its own timeout (a grain call says
so with its `ATTEMPT_FAILED`; a post on another route by the time its answer comes).
Beside its controls: without a network (where only a call rejected in its timeout's
instant is excused), and with a network but no timeout."""

from __future__ import annotations

from dyn_traces import K, Trace

from invariants.adapter import Capability, Route
from invariants.capabilities import DEFAULT_CAPABILITIES
from invariants.checks import CheckParams, monitor_for
from invariants.checks.harness_facts import Posted
from invariants.checks.monitor import run_monitor
from invariants.trace import MessageClass

NETWORKED = DEFAULT_CAPABILITIES | {Capability.NETWORK}
FLAGGED = ["DeliveryFailure answers rejected post gw.1 (a rejection has no reply)"]


def _found(t: Trace, capabilities: frozenset[Capability],
           facts: tuple[Posted, ...] = ()) -> list[str]:
    monitor = monitor_for("INV1", CheckParams(), capabilities)
    return [v.message for v in run_monitor(monitor, t.events, final=True, facts=facts)]


def _forwarded_and_rejected(t: Trace, *, timed_out: bool) -> Trace:
    t.add(K.ATTEMPT, hub="gw", delivery_id="gw.1", target="h0", attempt=0)
    t.add(K.REJECTED, hub="h0", delivery_id="gw.1", error="Unvouched")
    if timed_out:  # the callee's "taken" held on the way back past the caller's timeout
        t.at(2_000).add(K.ATTEMPT_FAILED, hub="gw", delivery_id="gw.1", error="TimedOut",
                        timed_out=True)
    t.add(K.FAILURE_EMITTED, hub="gw", delivery_id="gw.2", answers="gw.1",
          error="TimedOut" if timed_out else "Unvouched", sender="h0", target="client")
    return t


def test_a_caller_that_timed_out_on_a_held_reply_may_answer_its_timeout() -> None:
    t = _forwarded_and_rejected(Trace(), timed_out=True)
    assert _found(t, NETWORKED) == []
    assert _found(t, DEFAULT_CAPABILITIES) == FLAGGED  # without a network, none is held


def test_a_call_rejected_in_the_instant_its_caller_timed_out_may_be_answered_so() -> None:
    # No network: a destination the harness slowed landed the call as the caller's
    # response timeout fired; the caller never heard of the rejection.
    t = Trace()
    t.add(K.ATTEMPT, hub="gw", delivery_id="gw.1", target="h0", attempt=0)
    t.at(2_000).add(K.REJECTED, hub="h0", delivery_id="gw.1", error="Unvouched")
    t.add(K.ATTEMPT_FAILED, hub="gw", delivery_id="gw.1", error="TimedOut", timed_out=True)
    t.add(K.FAILURE_EMITTED, hub="gw", delivery_id="gw.2", answers="gw.1",
          error="TimedOut", sender="h0", target="client")
    assert _found(t, DEFAULT_CAPABILITIES) == []


def test_a_rejection_answered_without_a_timeout_is_flagged_on_a_network_too() -> None:
    assert _found(_forwarded_and_rejected(Trace(), timed_out=False), NETWORKED) == FLAGGED


# An anonymous post on the monolith route, made at 2 ms: no call events name it.
POSTED = Posted("gw.1", "client", "h0", "Request", MessageClass.USER, None, None,
                Route.MONOLITH, 2, 0)


def _routed_and_rejected(t: Trace, *, answered_ms: int) -> Trace:
    t.at(answered_ms).add(K.REJECTED, hub="h0", delivery_id="gw.1", error="Unvouched")
    t.add(K.FAILURE_EMITTED, hub="h0", delivery_id="gw.2", answers="gw.1", error="TimedOut",
          sender="h0", target="client")
    return t


def test_a_routed_post_answered_a_response_timeout_after_it_was_posted_is_excused() -> None:
    t = _routed_and_rejected(Trace(), answered_ms=2 + CheckParams().response_timeout_ms)
    assert _found(t, NETWORKED, (POSTED,)) == []
    assert _found(t, DEFAULT_CAPABILITIES, (POSTED,)) == FLAGGED  # without a network


def test_a_routed_post_answered_before_its_timeout_could_fire_is_flagged() -> None:
    t = _routed_and_rejected(Trace(), answered_ms=1 + CheckParams().response_timeout_ms)
    assert _found(t, NETWORKED, (POSTED,)) == FLAGGED


def test_only_one_answer_to_a_rejected_post_is_the_callers_own_timeout() -> None:
    """The caller's timeout excuses one answer; the rejection's own word arriving after it,
    answered too, is the reply a rejection must not have. The control: the timeout's
    answer alone."""
    for routed in (False, True):
        t = Trace()
        if routed:
            _routed_and_rejected(t, answered_ms=2 + CheckParams().response_timeout_ms)
        else:
            _forwarded_and_rejected(t, timed_out=True)
        facts = (POSTED,) if routed else ()
        assert _found(t, NETWORKED, facts) == []
        t.at(t.t + 1_500).add(K.FAILURE_EMITTED, hub="gw", delivery_id="gw.3", answers="gw.1",
                              error="Unvouched", sender="h0", target="client")
        assert _found(t, NETWORKED, facts) == FLAGGED
