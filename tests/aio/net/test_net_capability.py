"""The network capability: a kit adapter whose nodes run on the simulated network honours
the network's fault kinds at the node hosting their target (cut off, then healed; down,
then restarted and rebuilt), adapter-check's network program proves it (and fails an
adapter that does not rebuild a restarted node), the state machines draw the network's
families only for an adapter that declares it, and the checkers judge what a fault of the
network excuses: what a crash held is lost with it, a timeout anywhere may be the
network's."""

from __future__ import annotations

from net_minimesh import CLIENT_NODE, make, make_losing_restart, make_silent_rebuild

from invariants.adapter import Capability, Fault, FaultKind, FirstChooser, MessageSpec, Route
from invariants.checks import HubsMade, Injected, Posted, check
from invariants.conformance.programs import conformance
from invariants.dynamic.plans import machine_class
from invariants.trace import EventKind, MessageClass, TraceEvent
from reference_impl.adapter import make_adapter


def _handled_at(adapter: object, did: str) -> list[int]:
    return [e.time_ms for e in adapter.trace()  # type: ignore[attr-defined]
            if e.kind is EventKind.HANDLED and e.delivery_id == did]


def _handled_on_a_healthy_network() -> list[int]:
    healthy = make(FirstChooser())
    healthy.create_hub("h0")
    did = healthy.post("client", "h0", MessageSpec("Request"))
    healthy.run_until_idle(60_000)
    return _handled_at(healthy, did)


def test_a_partition_holds_a_post_until_it_heals() -> None:
    adapter = make(FirstChooser())
    adapter.create_hub("h0")
    adapter.inject(Fault(FaultKind.PARTITION_NODE, "h0", duration_ms=1_000))
    did = adapter.post("client", "h0", MessageSpec("Request"))
    adapter.run_until_idle(60_000)
    [handled] = _handled_at(adapter, did)
    assert 1_000 <= handled < 1_100  # the segment waited for the heal, then arrived
    # the control: the same post with no fault arrives in a few hops
    assert _handled_on_a_healthy_network() == [3]


def test_a_crash_loses_the_node_until_it_restarts_rebuilt() -> None:
    adapter = make(FirstChooser())
    adapter.create_hub("h0")
    # down longer than a post waits for its "ok" (2 s): the post meets no node at all
    adapter.inject(Fault(FaultKind.CRASH_NODE, "h0", duration_ms=3_000))
    during = adapter.post("client", "h0", MessageSpec("Request"))
    adapter.run_until_idle(60_000)
    after = adapter.post("client", "h0", MessageSpec("Request"))
    adapter.run_until_idle(60_000)
    failures = [e for e in adapter.trace() if e.kind is EventKind.FAILURE_EMITTED]
    assert [(f.answers, f.error) for f in failures] == [(during, "Unavailable")]
    assert _handled_at(adapter, during) == [] and len(_handled_at(adapter, after)) == 1
    assert adapter.network is not None and adapter.network.hosts["h0"].up
    created = [e.time_ms for e in adapter.trace() if e.kind is EventKind.HUB_CREATED]
    assert created == [0, 3_000]  # made, then rebuilt as the node came back


def test_the_network_fault_kinds_need_a_network_and_a_node() -> None:
    adapter = make(FirstChooser())
    adapter.create_hub("h0")
    adapter.inject(Fault(FaultKind.ISOLATE_OUTBOUND, "h0", duration_ms=500))
    adapter.inject(Fault(FaultKind.HOLD_LINKS, "h0", duration_ms=500))
    assert adapter.network is not None
    assert ("h0", CLIENT_NODE) in adapter.network.links.cut
    assert ("h0", CLIENT_NODE) in adapter.network.links.held
    adapter.run_until_idle(60_000)
    assert not adapter.network.links.cut and not adapter.network.links.held


def test_adapter_check_runs_the_network_program() -> None:
    declared, results = conformance(make)
    assert Capability.NETWORK in declared
    by_name = {result.program: result for result in results}
    assert by_name["network"].broken == () and by_name["network"].events > 0
    # the controls: an adapter whose restart_node rebuilds nothing, and one that rebuilds
    # the hub without its HUB_CREATED (the checkers would count the old queue and breaker)
    _, results = conformance(make_losing_restart)
    broken = next(r for r in results if r.program == "network").broken
    assert "posted to beta after its node restarted, was not handled there" in broken[0].message
    _, results = conformance(make_silent_rebuild)
    [silent] = next(r for r in results if r.program == "network").broken
    assert silent.kind == "HUB_CREATED" and "without a HUB_CREATED for beta" in silent.message


def test_the_machines_draw_the_network_families_only_for_a_network() -> None:
    families = {"partition", "hold_links", "crash", "cut_call"}
    for check_id in ("INV1", "INV2", "INV3", "INV4", "INV5", "INV6", "INV7"):
        assert families <= set(vars(machine_class(check_id, make, capabilities=frozenset(
            {Capability.NETWORK, Capability.SUBSCRIBE, Capability.STOP_LIFECYCLE,
             Capability.GRAIN_ROUTER})))), check_id
        assert not families & set(vars(machine_class(check_id, make_adapter))), check_id


def test_cut_call_makes_a_fault_and_a_call_across_it_in_one_step() -> None:
    """`cut_call` cuts the node hosting its target and calls it from a sender's node: into
    the fault (hops 0: the call waits for the heal), or the fault a hop or two after the
    call. The control: the same call with no cut arrives in a few hops."""

    def run(hops: int, cut: FaultKind = FaultKind.PARTITION_NODE) -> tuple[list[str], int]:
        state = machine_class("INV7", make)()
        told: list[str] = []
        post, inject = state.post, state.inject

        def posting(*args: object, **kwargs: object) -> str:
            told.append(f"post@{state.mesh.now_ms()}")
            return post(*args, **kwargs)  # type: ignore[arg-type]

        def injecting(fault: Fault) -> None:
            told.append(f"{fault.kind.value}@{state.mesh.now_ms()}")
            inject(fault)

        state.post, state.inject = posting, injecting  # type: ignore[method-assign]
        try:
            state.init(watermarks=(None, None, None), swarm={}, scenario=None)
            state.cut_call(sender="client", to="h0", cut=cut, duration_ms=1_000, hops=hops,
                           route=Route.MONOLITH)
            state.mesh.run_until_idle(60_000)
            [did] = [e.delivery_id for e in state.mesh.trace() if e.kind is EventKind.POSTED]
            [handled] = _handled_at(state.adapter, did)
        finally:
            state.teardown()
        return told, handled

    told, handled = run(hops=0)
    assert told == ["partition_node@0", "post@0"] and 1_000 <= handled < 1_100
    told, _ = run(hops=2, cut=FaultKind.HOLD_LINKS)
    assert told == ["post@0", "hold_links@2"]  # two hops of 1 ms (none seen yet) later
    # the control: a call with no fault is handled in a few hops
    assert _handled_on_a_healthy_network() == [3]


def test_a_crash_with_replay_meets_the_rebuilt_node_with_its_last_posts() -> None:
    """`crash(..., replay_after=...)` waits the crash out (and two hops, or a response
    timeout), then posts the run's last posts to and from the hubs on the crashed node
    again, as they were posted (this mesh puts each hub on a node of its own); other posts
    are not replayed. The control: without `replay_after` the step only arms the crash."""

    def run(at: str, replay_after: str | None) -> list[tuple[str, str, str, int]]:
        state = machine_class("INV7", make)()
        posted: list[tuple[str, str, str, int]] = []
        post = state.post

        def posting(sender: str, target: str, spec: MessageSpec, **kwargs: object) -> str:
            posted.append((sender, target, spec.type_name, state.mesh.now_ms()))
            return post(sender, target, spec, **kwargs)  # type: ignore[arg-type]

        state.post = posting  # type: ignore[method-assign]
        try:
            state.init(watermarks=(None, None, None), swarm={}, scenario=None)
            state.user(sender="client", to="h0", route=Route.MONOLITH, count=1)
            state.ignorable(sender="peer", to="h0", route=Route.DIRECT, count=1)
            state.user(sender="client", to="h1", route=Route.MONOLITH, count=1)
            state.user(sender="peer", to="h2", route=Route.MONOLITH, count=1)
            state.crash(to=at, duration_ms=1_000, replay_after=replay_after)
        finally:
            state.teardown()
        return posted[4:]

    late = 1_000 + machine_class("INV7", make).base_params.response_timeout_ms
    assert run("h0", "timeout") == [("client", "h0", "Request", late),
                                    ("peer", "h0", "Heartbeat", late)]
    # the node hosting the sender's own hub: what it sent is met again; and at once, two
    # of the mesh's hops after the rebuild (1 ms each: none seen arrive yet)
    assert run("peer", "rebuild") == [("peer", "h0", "Heartbeat", 1_002),
                                      ("peer", "h2", "Request", 1_002)]
    assert run("h0", None) == []


def _posted(did: str, at: int, seq: int) -> Posted:
    return Posted(did, "client", "h0", "Request", MessageClass.USER, None, "user",
                  Route.MONOLITH, at, seq)


def test_inv7_excuses_what_a_crash_held_or_was_posted_while_down_and_nothing_after() -> None:
    trace = [TraceEvent(0, 0, EventKind.HUB_CREATED, hub="h0", watermark=100),
             TraceEvent(1, 1, EventKind.POSTED, hub="h0", delivery_id="d1", sender="client",
                        target="h0", message_type="Request", message_class=MessageClass.USER),
             TraceEvent(2, 1, EventKind.ENQUEUED, hub="h0", delivery_id="d1", depth=1)]
    made = HubsMade(("h0", "client"), 0, 1)
    crash = Injected(FaultKind.CRASH_NODE, "h0", 1, 1_000, 1, 3)
    held = check("INV7", trace, final=True, facts=[made, _posted("d1", 1, 1), crash])
    assert held == []
    # the control: without the crash the delivery was owed an end
    lost = check("INV7", trace, final=True, facts=[made, _posted("d1", 1, 1)])
    assert any("d1 the harness posted" in v.message and "reached no end" in v.message
               for v in lost), lost
    # and one posted after the crash is owed one again
    later = [*trace, TraceEvent(3, 2_000, EventKind.POSTED, hub="h0", delivery_id="d2",
                                sender="client", target="h0", message_type="Request",
                                message_class=MessageClass.USER)]
    owed = check("INV7", later, final=True,
                 facts=[made, _posted("d1", 1, 1), crash, _posted("d2", 2_000, 3)])
    assert [v for v in owed if "d2 the harness posted" in v.message], owed
    # while the node is down, what is posted may be lost with it: owed nothing
    down = check("INV7", trace, final=True,
                 facts=[made, _posted("d1", 1, 1), crash, _posted("d3", 500, 3)])
    assert down == []


def test_the_judge_is_told_once_the_network_held_something() -> None:
    """The kit counts the network's verdicts that were not the nominal delivery; the judge
    tells its checkers once (`NetworkHeld`), before the events the hold may have caused.
    The control: a healthy run holds nothing and tells nothing."""
    from net_helpers import Scripted

    from invariants.adapter import Chooser
    from invariants.checks import CheckParams
    from invariants.dynamic.judge import Judge, recording

    def told(chooser: Chooser) -> tuple[int, bool, int]:
        adapter = make(chooser)
        adapter.create_hub("h0")
        adapter.post("client", "h0", MessageSpec("Request"))
        adapter.run_until_idle(60_000)
        with recording():
            judge = Judge(("INV4",), CheckParams(), None)
            judge.watch(CheckParams(), frozenset(Capability))
            judge.feed(adapter)
            judge.feed(adapter)  # once told, not again
        facts = judge.monitors[0].harness
        return adapter.network_verdicts_held(), facts.network_held, facts.told

    held, network_held, facts = told(Scripted(lambda options, why: options - 1))
    assert held > 0 and network_held and facts == 1
    assert told(FirstChooser()) == (0, False, 0)


def test_inv5_excuses_a_leg_a_crash_ended_during_the_hold() -> None:
    """A leg that ends while a crashed node is down was lost with the node, not cut by the
    stop's hold; the control: the same leg ended with no crash, and after the node is back."""
    trace = [TraceEvent(0, 1, EventKind.LEG_STARTED, hub="n1", delivery_id="d1",
                        leg_id="L1", leg_kind="route", depth=1),
             TraceEvent(1, 1, EventKind.STOP_REQUESTED, graceful=True, depth=1),
             TraceEvent(2, 1, EventKind.STOP_STAGE_ENTERED, stage=20_000, depth=1),
             TraceEvent(3, 1, EventKind.STOP_HOLD_STARTED, depth=1)]

    def found(ended_at: int, crashed: bool) -> list[str]:
        ended = TraceEvent(4, ended_at, EventKind.LEG_ENDED, hub="n1", delivery_id="d1",
                           leg_id="L1", reason="drained", depth=0)
        facts: list[object] = [Injected(FaultKind.CRASH_NODE, "h0", 1, 3_000, 1, 1)] \
            if crashed else []
        return [v.message for v in check("INV5", [*trace, ended], facts=facts)]  # type: ignore[arg-type]

    assert found(1, crashed=True) == []
    cut = ["leg L1 ended by 'drained' while the graceful stop held at Active: work cut off "
           "has not landed"]
    assert found(1, crashed=False) == cut
    assert found(3_001, crashed=True) == cut
