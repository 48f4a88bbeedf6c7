"""INV7 on a mesh with a simulated network (an adapter declaring `network`): a node may
finish its own part of a stop while others still hold, and an answer's own route may fail
on the way. Each rule beside its control on an adapter without a network."""

from __future__ import annotations

from collections.abc import Sequence

from dyn_traces import C, K, Trace

from invariants.adapter import Capability, Route
from invariants.capabilities import DEFAULT_CAPABILITIES
from invariants.checks import CheckParams, monitor_for
from invariants.checks.harness_facts import HarnessFact, HubsMade, Posted, StopAsked
from invariants.checks.monitor import run_monitor

NETWORKED = DEFAULT_CAPABILITIES | {Capability.NETWORK}
POSTED = Posted("d1", "client", "h0", "Request", C.USER, None, "user", Route.MONOLITH, 0, 0)


def _found(t: Trace, capabilities: frozenset[Capability],
           facts: Sequence[HarnessFact]) -> list[str]:
    monitor = monitor_for("INV7", CheckParams(), capabilities)
    return [v.message for v in run_monitor(monitor, t.events, final=True, facts=facts)]


def _refused_by_a_stopped_node() -> Trace:
    t = Trace()
    t.add(K.DISPATCH_REFUSED, hub="n1", delivery_id="d1", error="ShuttingDown")
    t.add(K.ANSWER_SUPPRESSED, hub="n1", delivery_id="d1", reason="silo_stopped")
    return t


def test_a_node_that_finished_its_stop_leaves_what_it_refuses_unanswered() -> None:
    t = _refused_by_a_stopped_node()
    asked = StopAsked(True, 0, 0)
    assert _found(t, NETWORKED, [POSTED, asked]) == []
    unanswered = ["ordinary delivery d1 failed routing and was never answered"]
    # The controls: one silo stops as a whole (its STOP_COMPLETED says when), and before
    # the harness asked for a stop no node may claim one.
    assert _found(t, DEFAULT_CAPABILITIES, [POSTED, asked]) == unanswered
    assert _found(t, NETWORKED, [POSTED]) == unanswered


def test_an_answer_the_network_lost_on_its_way_is_owed_no_landing() -> None:
    t = Trace()
    t.add(K.FAILURE_EMITTED, hub="n2", delivery_id="n1", answers="d1", error="NotFound",
          sender="h0", target="client")
    t.add(K.ANSWER_SUPPRESSED, hub="n2", delivery_id="n1", reason="may_answer_false")
    made = HubsMade(("h0", "client"), 0, 0)
    assert _found(t, NETWORKED, [made, POSTED]) == []
    assert _found(t, DEFAULT_CAPABILITIES, [made, POSTED]) == [
        "the answer n1 to d1 never reached its sender client, a live hub"]
