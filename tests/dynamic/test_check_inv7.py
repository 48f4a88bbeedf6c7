"""INV7 on hand-built traces: one answer per request, none for heartbeats and failures."""

import json

import pytest
from dyn_traces import C, K, Trace

from invariants.adapter import FaultKind, Route
from invariants.capabilities import DEFAULT_CAPABILITIES
from invariants.checks import CheckParams, HubsMade, Injected, Posted, StopAsked
from invariants.checks import inv7_answer_once as inv7
from invariants.checks.inv7_order import ORDER
from invariants.checks.monitor import run_monitor
from invariants.trace import MessageClass, TraceEvent, dump_jsonl


def load_jsonl(text: str) -> list[TraceEvent]:
    """The events of canonical JSON lines (what `dump_jsonl` writes)."""
    return [TraceEvent.from_json(json.loads(line)) for line in text.splitlines() if line]


def _post(t: Trace, did: str, cls: C, type_name: str) -> None:
    t.add(K.POSTED, hub="sender", delivery_id=did, sender="sender", target="gone",
          message_class=cls, message_type=type_name, packaged=True)


def _stopping_host(t: Trace) -> None:
    """The seed shape: three packaged deliveries refused by a stopping host."""
    _post(t, "hb", C.IGNORABLE, "Heartbeat")
    _post(t, "df", C.FAILURE, "DeliveryFailure")
    _post(t, "ctl", C.USER, "Control")
    for did in ("hb", "df", "ctl"):
        t.add(K.DISPATCH_REFUSED, hub="router", delivery_id=did, error="ShuttingDown")


def test_only_the_ordinary_delivery_is_answered_once() -> None:
    t = Trace()
    _stopping_host(t)
    t.add(K.ANSWER_SUPPRESSED, hub="router", delivery_id="hb")
    t.add(K.ANSWER_SUPPRESSED, hub="router", delivery_id="df")
    t.add(K.FAILURE_EMITTED, hub="router", delivery_id="n1", answers="ctl", error="ShuttingDown")
    assert inv7.check(t.events, final=True) == []


def test_the_same_holds_after_a_json_round_trip_of_the_trace() -> None:
    t = Trace()
    _stopping_host(t)
    t.add(K.FAILURE_EMITTED, hub="router", delivery_id="n1", answers="ctl", error="ShuttingDown")
    assert inv7.check(load_jsonl(dump_jsonl(t.events)), final=True) == []


@pytest.mark.parametrize("answered", ["hb", "df"])
def test_answering_a_packaged_heartbeat_or_failure_is_flagged(answered: str) -> None:
    t = Trace()
    _stopping_host(t)
    t.add(K.FAILURE_EMITTED, hub="router", delivery_id="n1", answers="ctl", error="ShuttingDown")
    t.add(K.FAILURE_EMITTED, hub="router", delivery_id="n2", answers=answered, error="NotFound")
    [v] = inv7.check(t.events, final=True)
    assert v.message.startswith("packaged ")
    assert f"delivery {answered}" in v.message


def test_answering_twice_is_flagged() -> None:
    t = Trace()
    _stopping_host(t)
    t.add(K.FAILURE_EMITTED, hub="router", delivery_id="n1", answers="ctl", error="ShuttingDown")
    t.add(K.FAILURE_EMITTED, hub="router", delivery_id="n2", answers="ctl", error="ShuttingDown")
    [v] = inv7.check(t.events)
    assert "answered more than once" in v.message


def test_one_answer_id_given_to_answers_of_two_deliveries_is_flagged() -> None:
    """An answer is a post too: a node that numbers its answers afresh after a rebuild
    gives a second delivery's answer the id of the first's. The control: a fresh id."""
    def found(second_id: str) -> list[str]:
        t = Trace()
        _post(t, "d1", C.USER, "Control")
        _post(t, "d2", C.USER, "Control")
        for did, answer in (("d1", "n1"), ("d2", second_id)):
            t.add(K.DISPATCH_REFUSED, hub="router", delivery_id=did, error="ShuttingDown")
            t.add(K.FAILURE_EMITTED, hub="router", delivery_id=answer, answers=did,
                  error="ShuttingDown")
        return [v.message for v in inv7.check(t.events)]

    assert found("n1") == ["the mesh gave answer id n1 to answers of d1 and d2"]
    assert found("n2") == []


def test_ordinary_failure_never_answered_is_unfinished() -> None:
    t = Trace()
    _stopping_host(t)
    assert inv7.check(t.events) == []
    [v] = inv7.check(t.events, final=True)
    assert "ctl failed routing and was never answered" in v.message


def test_a_failed_leg_of_an_ordinary_delivery_needs_its_answer() -> None:
    t = Trace()
    _post(t, "u", C.USER, "Req")
    t.add(K.LEG_ENDED, hub="router", leg_id="L", delivery_id="u", error="NotFound")
    assert len(inv7.check(t.events, final=True)) == 1
    t.add(K.FAILURE_EMITTED, hub="router", delivery_id="n", answers="u", error="NotFound")
    assert inv7.check(t.events, final=True) == []


def test_class_declared_by_the_driver_covers_a_delivery_that_never_reached_a_hub() -> None:
    t = Trace()
    t.add(K.LEG_STARTED, leg_id="L1", leg_kind="route", delivery_id="hb")
    t.add(K.FAILURE_EMITTED, hub="monolith", delivery_id="n1", answers="hb", error="NotFound")
    t.add(K.LEG_ENDED, leg_id="L1", leg_kind="route", delivery_id="hb", reason="failed")
    assert inv7.check(t.events, final=True) == []
    [v] = inv7.check(t.events, declared={"hb": C.IGNORABLE})
    assert v.message == "ignorable delivery hb was answered (must never be)"


def test_routing_failures_after_the_stop_completed_are_owed_no_answer() -> None:
    t = Trace()
    t.add(K.STOP_COMPLETED, hub="silo")
    t.add(K.DISPATCH_REFUSED, hub="monolith", delivery_id="late", error="ShuttingDown")
    assert inv7.check(t.events, final=True, declared={"late": C.USER}) == []


def _queued(t: Trace, did: str, hub: str = "h0") -> Posted:
    """A request queued at `hub`, and the harness fact of its post."""
    t.add(K.POSTED, hub=hub, delivery_id=did, message_class=C.USER, message_type="Request")
    t.add(K.ENQUEUED, hub=hub, delivery_id=did)
    return Posted(did, "client", hub, "Request", C.USER, None, "user", Route.DIRECT, 0, 0)


def test_a_posted_delivery_that_reaches_no_end_is_lost() -> None:
    t = Trace()
    facts = [_queued(t, "d1"), _queued(t, "d2")]
    t.add(K.HANDLED, hub="h0", delivery_id="d1")
    found = inv7.check(t.events, final=True, facts=facts)
    assert [v.message for v in found] == [
        "delivery d2 the harness posted (Request from client to h0 via direct at 0 ms) "
        "reached no end by quiescence: last seen enqueued at h0 at 0 ms"]
    monitor = inv7.AnswerOnce()
    run_monitor(monitor, t.events, facts=facts)
    assert monitor.evidence[inv7.ACCOUNTED] == 1
    t.add(K.HANDLED, hub="h0", delivery_id="d2")
    assert inv7.check(t.events, final=True, facts=facts) == []


def test_a_delivery_cut_off_by_the_stop_or_a_removed_hub_is_not_lost() -> None:
    t = Trace()
    facts = [_queued(t, "d1"), _queued(t, "d2", "h1"),
             Injected(FaultKind.REMOVE_TARGET, "h0", 1, 0, 0, 4)]  # after both are queued
    t.add(K.STOP_COMPLETED, hub="silo")
    assert inv7.check(t.events, final=True, facts=facts) == []
    # Without the stop only d2, queued at a hub that is still there, is lost.
    assert [v.message.split(" the harness")[0]
            for v in inv7.check(t.events[:-1], final=True, facts=facts)] == ["delivery d2"]


def _refused(t: Trace, did: str, target: str, error: str) -> Posted:
    """A post to `target`, refused by the router and answered `error`."""
    t.add(K.DISPATCH_REFUSED, hub="monolith", delivery_id=did, message_class=C.USER,
          error="ShuttingDown")
    t.add(K.FAILURE_EMITTED, hub="monolith", delivery_id=f"n{did}", answers=did,
          error=error, sender=target, target="client")
    return Posted(did, "client", target, "Request", C.USER, None, "user", Route.MONOLITH, 0, 0)


def _not_found_verdict(t: Trace, facts: list[object]) -> tuple[list[str], int]:
    monitor = inv7.AnswerOnce()
    found = run_monitor(monitor, t.events, facts=facts)  # type: ignore[arg-type]
    return [v.message for v in found], monitor.evidence[inv7.LIVE_NOT_FOUND]


def test_a_live_hub_is_never_answered_not_found() -> None:
    t = Trace()
    t.add(K.HUB_CREATED, hub="h0")
    # The router refuses during a stop the harness asked for (so ShuttingDown is the truth).
    facts: list[object] = [StopAsked(True, 0, 0), _refused(t, "d1", "h0", "ShuttingDown")]
    assert _not_found_verdict(t, facts) == ([], 1)
    facts.append(_refused(t, "d2", "h0", "NotFound"))
    assert _not_found_verdict(t, facts) == (
        ["delivery d2 to h0, a hub that exists and was never removed, was answered NotFound"],
        1)


def _stopping_verdict(t: Trace, facts: list[object]) -> tuple[list[str], int]:
    monitor = inv7.AnswerOnce()
    found = run_monitor(monitor, t.events, facts=facts)  # type: ignore[arg-type]
    return [v.message for v in found], monitor.evidence[inv7.STOPPING_ONLY]


def test_shutting_down_is_the_truth_only_once_a_stop_was_asked() -> None:
    t = Trace()
    t.add(K.HUB_CREATED, hub="h0")
    facts: list[object] = [_refused(t, "d1", "ghost", "NotFound"),
                           _refused(t, "d2", "h0", "ShuttingDown")]
    assert _stopping_verdict(t, facts) == (
        ["delivery d2 was answered ShuttingDown though no stop was asked: its sender is told "
         "to keep recovering from a host that is not stopping"], 1)
    # The same answers once the harness asked for a stop: both are the truth, neither counted.
    assert _stopping_verdict(t, [StopAsked(True, 0, 0), *facts]) == ([], 0)


def test_not_found_is_the_truth_for_a_target_never_created_or_removed() -> None:
    t = Trace()
    t.add(K.HUB_CREATED, hub="h0")
    facts: list[object] = [_refused(t, "d1", "ghost", "NotFound"),
                           Injected(FaultKind.REMOVE_TARGET, "h0", 1, 0, 0, len(t.events))]
    facts.append(_refused(t, "d2", "h0", "NotFound"))
    assert _not_found_verdict(t, facts) == ([], 0)


def test_a_subscription_request_to_a_live_hub_is_never_answered_not_found() -> None:
    from invariants.checks import Subscribed

    t = Trace()
    t.add(K.HUB_CREATED, hub="h0")
    facts: list[object] = [Subscribed("s1", "client", "h0", 5, 0, len(t.events))]
    t.add(K.SUBSCRIBE_ATTEMPT, hub="client", subscription_id="s1", attempt=0,
          delivery_id="r0", target="h0")
    t.add(K.FAILURE_EMITTED, hub="h0", delivery_id="f0", answers="r0", error="NotFound")
    assert _not_found_verdict(t, facts)[0] == [
        "delivery r0 to h0, a hub that exists and was never removed, was answered NotFound"]


def _arrivals_verdict(t: Trace, facts: list[object]) -> list[str]:
    found = run_monitor(inv7.AnswerOnce(), t.events, facts=facts)  # type: ignore[arg-type]
    return [v.message for v in found]


def _grain_post(did: str, target: str) -> Posted:
    return Posted(did, "client", target, "Request", C.USER, None, "user", Route.GRAIN, 0, 0)


def test_a_delivery_arrives_only_at_a_hub_the_harness_made() -> None:
    t = Trace()
    facts: list[object] = [HubsMade(("h0",), 0, 0), _grain_post("d1", "h0"),
                           _grain_post("d2", "ghost")]
    t.add(K.CALL_RECEIVED, hub="h0", delivery_id="d1", attempt=0)
    t.add(K.HANDLED, hub="h0", delivery_id="d1")
    assert _arrivals_verdict(t, facts) == []
    t.add(K.CALL_RECEIVED, hub="ghost", delivery_id="d2", attempt=0)
    assert _arrivals_verdict(t, facts) == [
        "delivery d2 (Request from client) arrived at ghost (call_received), a hub the "
        "harness never made or removed"]
    # Without the harness saying which hubs it made, only a removal says a hub is missing.
    assert _arrivals_verdict(t, facts[1:]) == []


def test_a_delivery_queued_at_a_hub_the_harness_removed_is_flagged() -> None:
    t = Trace()
    posted = Posted("d1", "client", "h0", "Request", C.USER, None, "user", Route.DIRECT, 0, 0)
    t.add(K.ENQUEUED, hub="h0", delivery_id="d1")  # queued, then the hub removed: cut off
    t.add(K.POSTED, hub="h0", delivery_id="d2")
    t.add(K.ENQUEUED, hub="h0", delivery_id="d2")
    late = Posted("d2", "client", "h0", "Request", C.USER, None, "user", Route.DIRECT, 0, 2)
    removed = Injected(FaultKind.REMOVE_TARGET, "h0", 1, 0, 0, 1)
    assert _arrivals_verdict(t, [posted, removed, late]) == [
        "delivery d2 (Request from client) arrived at h0 (enqueued), a hub the harness never "
        "made or removed"]


def test_an_answer_dropped_for_want_of_a_sender_hub_the_harness_made_is_flagged() -> None:
    t = Trace()
    t.add(K.FAILURE_EMITTED, hub="monolith", delivery_id="n1", answers="d1", error="NotFound",
          sender="ghost", target="client")
    posted = Posted("d1", "client", "ghost", "Request", C.USER, None, "user", Route.MONOLITH,
                    0, 0)
    # The harness made h0 and posted from client, which made client's hub: the answer owed.
    assert [v.message for v in inv7.check(t.events, final=True, facts=[
        HubsMade(("h0",), 0, 0), posted])] == [
        "the answer n1 to d1 never reached its sender client, a live hub"]
    # Without the harness saying what it made, only the trace's HUB_CREATED makes it live.
    assert inv7.check(t.events, final=True, facts=[posted]) == []


def _direct(did: str, target: str = "h0", route: Route = Route.DIRECT) -> Posted:
    return Posted(did, "client", target, "Request", C.USER, None, "user", route, 0, 0)


def _handled_in(order: list[str], facts: list[object],
                params: CheckParams | None = None) -> tuple[list[str], int]:
    t = Trace()
    for did in order:
        t.add(K.HANDLED, hub="h0", delivery_id=did)
    monitor = inv7.AnswerOnce(params or CheckParams())
    found = run_monitor(monitor, t.events, facts=facts)  # type: ignore[arg-type]
    return [v.message for v in found], monitor.evidence[ORDER]


def test_one_senders_direct_posts_are_handled_in_the_order_posted() -> None:
    facts: list[object] = [_direct("d1"), _direct("d2"), _direct("d3")]
    assert _handled_in(["d1", "d2", "d3"], facts) == ([], 2)
    assert _handled_in(["d1", "d3"], facts) == ([], 1)  # d2 never ran: left out
    assert _handled_in(["d2", "d1"], facts) == ([
        "delivery d1 was handled at h0 after d2, which client posted after it: posts of "
        "one sender to one target on the direct route are handled in the order posted "
        "(ordered_routes)"], 0)


def test_routes_the_mesh_does_not_keep_in_order_are_not_judged() -> None:
    routed = [_direct("d1", route=Route.MONOLITH), _direct("d2", route=Route.MONOLITH)]
    assert _handled_in(["d2", "d1"], routed) == ([], 0)
    unordered = CheckParams(ordered_routes=frozenset())
    assert _handled_in(["d2", "d1"], [_direct("d1"), _direct("d2")], unordered) == ([], 0)
    with pytest.raises(ValueError, match="ordered_routes: carrier is not a route"):
        CheckParams(ordered_routes=frozenset({"carrier"}))


def _two_posts_handled_out_of_order(
    second_class: MessageClass,
) -> tuple[list[TraceEvent], list[Posted]]:
    """client posts a Request, then a message of `second_class`, direct to h0; h0 handles
    the second first."""
    t = Trace()
    facts = [
        Posted("d1", "client", "h0", "Request", MessageClass.USER, None, "user", Route.DIRECT,
               0, 0),
        Posted("d2", "client", "h0", "Next", second_class, None, "user", Route.DIRECT, 0, 0),
    ]
    for did, kind in (("d1", MessageClass.USER), ("d2", second_class)):
        t.add(K.POSTED, hub="h0", delivery_id=did, sender="client", target="h0",
              message_type="Request", message_class=kind)
        t.add(K.ENQUEUED, hub="h0", delivery_id=did)
    t.at(1).add(K.HANDLED, hub="h0", delivery_id="d2")
    t.add(K.HANDLED, hub="h0", delivery_id="d1")
    return list(t.events), facts


def test_order_across_classes_is_a_declared_policy() -> None:
    events, facts = _two_posts_handled_out_of_order(MessageClass.LIFECYCLE)
    flagged = [v.message for v in inv7.check(events, facts=facts)]  # type: ignore[arg-type]
    assert any("delivery d1 was handled at h0 after d2" in m for m in flagged), flagged
    # A mesh whose control messages overtake bulk ones by design declares it: then only
    # posts of one class keep their order.
    per_class = CheckParams(order_across_classes=False)
    assert inv7.check(events, params=per_class, facts=facts) == []  # type: ignore[arg-type]
    # Negative control: two posts of one class out of order are still a violation there.
    same, same_facts = _two_posts_handled_out_of_order(MessageClass.USER)
    [v] = inv7.check(same, params=per_class, facts=same_facts)  # type: ignore[arg-type]
    assert "posts of class user of one sender" in v.message


def test_no_ordered_route_leaves_the_order_obligation_not_applicable() -> None:
    none = CheckParams(ordered_routes=frozenset())
    reasons = inv7.AnswerOnce.inapplicable(DEFAULT_CAPABILITIES, none)
    assert reasons[ORDER].startswith("ordered_routes = []")
    # Negative control: the reference's policy keeps it applicable.
    assert ORDER not in inv7.AnswerOnce.inapplicable(DEFAULT_CAPABILITIES, CheckParams())


def test_a_delivery_queued_at_a_hub_the_harness_removed_went_with_it() -> None:
    t = Trace()
    facts: list[object] = [_queued(t, "d1"), _queued(t, "d2")]
    t.add(K.HANDLED, hub="h0", delivery_id="d1")
    facts.append(Injected(FaultKind.REMOVE_TARGET, "h0", 1, 0, t.t, len(t.events)))
    assert inv7.check(t.events, final=True, facts=facts) == []  # type: ignore[arg-type]
    # Negative control: the same queue with its hub still there has lost d2.
    [v] = inv7.check(t.events, final=True, facts=facts[:2])  # type: ignore[arg-type]
    assert "d2 the harness posted" in v.message


def test_a_delivery_posted_before_its_hub_was_removed_may_still_arrive() -> None:
    # Posted, then the hub removed in the same instant, then handled there as the drive
    # runs: in flight (or queued) as the hub went, not a post to a missing hub.
    t = Trace()
    before = Posted("d1", "client", "h1", "Request", C.USER, None, "user", Route.DIRECT, 0, 0)
    removed = Injected(FaultKind.REMOVE_TARGET, "h1", 1, 0, 0, 0)
    after = Posted("d2", "client", "h1", "Request", C.USER, None, "user", Route.DIRECT, 0, 0)
    t.add(K.HANDLED, hub="h1", delivery_id="d1")
    assert _arrivals_verdict(t, [before, removed]) == []
    # Negative control: one posted after the removal arriving there is flagged.
    t.add(K.HANDLED, hub="h1", delivery_id="d2")
    assert _arrivals_verdict(t, [before, removed, after]) == [
        "delivery d2 (Request from client) arrived at h1 (handled), a hub the harness never "
        "made or removed"]


def test_two_posts_given_one_delivery_id_are_flagged() -> None:
    """One answer per request needs one id per request; the control: two ids."""

    def found(second_id: str) -> list[str]:
        first = Posted("n1.1", "client", "h0", "Request", C.USER, None, "user",
                       Route.MONOLITH, 0, 0)
        second = Posted(second_id, "client", "h1", "Request", C.USER, None, "user",
                        Route.MONOLITH, 550, 0)
        return [v.message for v in inv7.check([], facts=[first, second])]

    assert found("n1.1") == ["the mesh gave delivery id n1.1 to two posts: client->h0 at "
                             "0 ms and client->h1 at 550 ms"]
    assert found("n1@2.1") == []
