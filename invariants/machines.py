"""Hypothesis state machines that drive any mesh through the adapter protocol.

`machine_class(check_id, adapter_factory)` builds a `RuleBasedStateMachine` that checks one
invariant (or several) on the trace of a mesh it drives: it creates hubs with drawn
watermarks, posts user and can-be-ignored traffic, floods with many distinct keys, posts
without identity, subscribes to missing and present targets, injects rejections and
timeouts into grain calls, blocks turns, slows destinations, removes targets, advances
virtual time and stops the silo gracefully or not.

- Every scheduling choice comes from Hypothesis: each `advance` step draws a short
  schedule the mesh's `Chooser` reads (`ScriptedChooser`), and every fault is a drawn rule.
- Swarm: the `init` rule switches each optional rule family (fault kinds among them) on
  or off for the run, so a shrunk failure carries only the families it needs.
- Each check gets the rule families its invariant needs (`PLANS`), so a mesh breaking it
  is found in few examples and shrinks to a few steps; `init` may start a run with one of
  the check's seed scenarios (`invariants.seed_programs`), so the known shapes are tried.
- Safety after every step (the checker's monitor is fed only the new events), deadlines
  against virtual time, liveness at teardown: run to quiescence within a bound, then
  every subscription terminated, queues drained, the stop completed, answers owed given.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

from hypothesis import event, note, target
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from invariants.adapter import AdapterFactory, Fault, FaultKind, MeshAdapter, MessageSpec, Route
from invariants.checks import CHECK_IDS, CheckParams, Monitor, Violation, monitor_for
from invariants.report import InvariantViolated, failure_diagram, failure_note, write_diagram
from invariants.scripted_chooser import ScriptedChooser
from invariants.seed_programs import SEED_PROGRAMS
from invariants.trace import EventKind, MessageClass, TraceEvent

HUBS = ("h0", "h1", "h2")
MISSING = ("h0/gone", "ghost")  # under a live prefix, and nowhere at all
SENDERS = ("client", "peer")
WATERMARKS = (4, 25, None)  # None: the mesh's default
LIVENESS_LIMIT_MS = 10 * 60 * 1000  # teardown runs to quiescence within this bound
FANOUT_BASE = 2_001  # one past the breaker threshold: a 3-tuple key would trip
MAX_BULK_STEPS = 1  # fan-outs and storms per run (seed scenarios count): thousands of posts each
_BULK = frozenset({"fanout", "storm"})

HEARTBEAT = MessageSpec("Heartbeat", MessageClass.IGNORABLE)


@dataclass(frozen=True)
class Plan:
    """What a machine for one check exercises: families always on, and swarm-toggled ones."""

    core: frozenset[str]
    extra: frozenset[str]
    routes: tuple[Route, ...] = (Route.MONOLITH, Route.GRAIN, Route.DIRECT)
    targets: tuple[str, ...] = HUBS + MISSING  # where traffic is posted


def _plan(
    core: str,
    extra: str,
    routes: tuple[Route, ...] = Plan.routes,
    targets: tuple[str, ...] = Plan.targets,
) -> Plan:
    return Plan(frozenset(core.split()), frozenset(extra.split()), routes, targets)


PLANS: Mapping[str, Plan] = {
    "INV1": _plan("anonymous failure user", "reject timeout block slow subscribe stop ignorable"),
    "INV2": _plan("subscribe", "remove block slow stop user"),
    "INV3": _plan("flood user block ignorable", "slow remove stop anonymous"),
    "INV4": _plan("user reject timeout", "block slow stop remove", (Route.GRAIN,), HUBS),
    "INV5": _plan("user stop slow", "reject timeout block failure ignorable subscribe remove"),
    "INV6": _plan("fanout user", "storm ignorable block stop"),
    "INV7": _plan("ignorable failure user stop", "slow reject timeout remove anonymous"),
}

# Trace events that say a behaviour was reached, for Hypothesis' statistics.
_BEHAVIOURS: Mapping[EventKind, str] = {
    EventKind.BREAKER_TRIPPED: "breaker tripped",
    EventKind.SHED: "aggregate shed",
    EventKind.REJECTED: "post rejected",
    EventKind.SUBSCRIBE_TERMINATED: "subscription terminated",
    EventKind.SUBSCRIBE_ANSWERED: "subscription answered",
    EventKind.ANSWER_SUPPRESSED: "answer suppressed",
    EventKind.FAILURE_EMITTED: "failure answered",
    EventKind.DISPATCH_REFUSED: "dispatch refused",
    EventKind.RESIDUAL_LEG: "stop hold expired",
    EventKind.SATURATION_LOGGED: "routing pool saturated",
    EventKind.STOP_COMPLETED: "stop completed",
    EventKind.GATED: "gated by teardown",
}


@dataclass
class RunStats:
    """What one `run_invariant` saw across examples (one instance per machine class)."""

    examples: int = 0
    first_failure_example: int | None = None
    failing_steps: int | None = None  # steps of the latest failing run: the shrunk one
    violations: tuple[Violation, ...] = ()
    diagram: str | None = None
    behaviours: dict[str, int] = field(default_factory=dict)


class MeshMachine(RuleBasedStateMachine):
    """The shared driver; `machine_class` adds the rules a check needs."""

    check_ids: ClassVar[tuple[str, ...]] = ()
    adapter_factory: ClassVar[AdapterFactory]
    base_params: ClassVar[CheckParams] = CheckParams()
    plan: ClassVar[Plan]
    stats: ClassVar[RunStats]
    diagram_path: ClassVar[Path | None] = None

    def __init__(self) -> None:
        super().__init__()
        self.chooser = ScriptedChooser()
        self.adapter: MeshAdapter | None = None
        self.monitors: list[Monitor] = []
        self.enabled: frozenset[str] = frozenset()
        self.fed = 0
        self.steps = 0
        self.stopped = False
        self.failed = False  # a violation was raised: teardown only cleans up
        self.flood_keys = 0
        self.bulk_steps = 0
        self.max_depth = 0
        self.max_in_flight = 0
        self._depth: dict[str, int] = {}
        self._in_flight = 0
        self._seen: set[str] = set()
        self.stats.examples += 1

    # Driving ----------------------------------------------------------------------------

    @property
    def mesh(self) -> MeshAdapter:
        if self.adapter is None:
            raise RuntimeError("the init rule has not run")
        return self.adapter

    def start(self, watermarks: Sequence[int | None], swarm: Mapping[str, bool]) -> None:
        self.enabled = self.plan.core | {name for name, on in swarm.items() if on}
        self.adapter = type(self).adapter_factory(self.chooser)
        configured = {}
        for hub, watermark in zip(HUBS, watermarks, strict=True):
            self.adapter.create_hub(hub, watermark=watermark)
            if watermark is not None:
                configured[hub] = watermark
        params = replace(
            self.base_params, watermarks={**self.base_params.watermarks, **configured}
        )
        self.monitors = [monitor_for(check_id, params) for check_id in self.check_ids]

    def post(
        self,
        sender: str,
        target: str,
        spec: MessageSpec,
        *,
        identity: str | None = "user",
        route: Route = Route.MONOLITH,
    ) -> str:
        delivery_id = self.mesh.post(sender, target, spec, identity=identity, route=route)
        for monitor in self.monitors:
            monitor.declare(delivery_id, spec.message_class)
        return delivery_id

    def step(self) -> None:
        self.steps += 1

    # Checking ---------------------------------------------------------------------------

    def _feed(self) -> None:
        trace = self.mesh.trace()
        fresh = trace[self.fed :]
        if not fresh:
            return
        self.fed = len(trace)
        for monitor in self.monitors:
            monitor.feed(fresh)
        self._observe(fresh)

    def _observe(self, events: Sequence[TraceEvent]) -> None:
        """Coverage (events) and the depth/in-flight maxima Hypothesis targets."""
        for e in events:
            kind = e.kind
            if kind is EventKind.ENQUEUED and e.hub is not None:
                depth = self._depth[e.hub] = self._depth.get(e.hub, 0) + 1
                self.max_depth = max(self.max_depth, depth)
            elif kind is EventKind.HANDLED and e.hub is not None:
                self._depth[e.hub] = max(0, self._depth.get(e.hub, 0) - 1)
            elif kind is EventKind.LEG_STARTED:
                self._in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self._in_flight)
            elif kind is EventKind.LEG_ENDED:
                self._in_flight -= 1
            label = _BEHAVIOURS.get(kind)
            if kind is EventKind.STOP_REQUESTED:
                label = "graceful stop" if e.graceful else "non-graceful stop"
            elif kind is EventKind.ATTEMPT and e.attempt == self.base_params.delivery_retries:
                label = "delivery retry budget spent"
            elif kind is EventKind.ATTEMPT_FAILED and e.timed_out:
                label = "attempt timed out"
            if label is not None and label not in self._seen:
                self._seen.add(label)
                self.stats.behaviours[label] = self.stats.behaviours.get(label, 0) + 1
                if currently_in_test_context():
                    event(label)

    def _verify(self, *, final: bool) -> None:
        now = self.mesh.now_ms()
        found = [v for m in self.monitors for v in m.violations(now_ms=now, final=final)]
        if found:
            self._fail(found)

    def _fail(self, violations: list[Violation]) -> None:
        self.failed = True
        stats = self.stats
        if stats.first_failure_example is None:
            stats.first_failure_example = stats.examples
        stats.failing_steps = self.steps
        stats.violations = tuple(violations)
        diagram = failure_diagram(self.mesh.trace(), violations)
        stats.diagram = diagram
        path = self.diagram_path
        if path is not None:
            write_diagram(path, diagram)
        if currently_in_test_context():
            note(failure_note(diagram, path))
        raise InvariantViolated(self.check_ids, violations)

    @invariant()
    def safety(self) -> None:
        if self.adapter is None:
            return
        self._feed()
        self._verify(final=False)

    def teardown(self) -> None:
        if self.adapter is None or self.failed:
            return
        quiescent = self.mesh.run_until_idle(LIVENESS_LIMIT_MS)
        self._feed()
        if currently_in_test_context():
            event("quiescent at teardown" if quiescent else "not quiescent within the bound")
            target(float(self.max_depth), label="max queue depth")
            target(float(self.max_in_flight), label="max legs in flight")
        self._verify(final=True)

    # Rule bodies (wrapped per class by `machine_class`) -------------------------------------

    def do_user(self, sender: str, to: str, route: Route, count: int) -> None:
        for _ in range(count):
            self.post(sender, to, MessageSpec("Request"), route=route)

    def do_ignorable(self, sender: str, to: str, route: Route, count: int) -> None:
        for _ in range(count):
            self.post(sender, to, HEARTBEAT, route=route)

    def do_failure(self, sender: str, to: str, route: Route, lifecycle: bool) -> None:
        spec = (
            MessageSpec("ShutdownRequest", MessageClass.LIFECYCLE)
            if lifecycle
            else MessageSpec("DeliveryFailure", MessageClass.FAILURE)
        )
        self.post(sender, to, spec, route=route)

    def do_anonymous(self, sender: str, to: str, route: Route, message_class: str) -> None:
        spec = MessageSpec("UpdateStreamRequest", MessageClass(message_class))
        self.post(sender, to, spec, identity=None, route=route)

    def do_flood(self, to: str, count: int, route: Route) -> None:
        """Many distinct keys of can-be-ignored traffic (no single key trips the breaker),
        then a user-facing probe behind it, which must still be handled."""
        for _ in range(count):
            self.flood_keys += 1
            spec = MessageSpec("Heartbeat", MessageClass.IGNORABLE, f"path/{self.flood_keys}")
            self.post("flooder", to, spec, route=route)
        self.post("prober", to, MessageSpec("Probe"), route=route)

    def do_fanout(self, to: str, extra: int) -> None:
        """One sender, target and type about many payload identities, in one window."""
        self.bulk_steps += 1
        for i in range(FANOUT_BASE + extra):
            spec = MessageSpec("CreateOrUpdateNode", MessageClass.USER, f"node/{i}")
            self.post("importer", to, spec, route=Route.DIRECT)

    def do_storm(self, to: str) -> None:
        """One key past the threshold in one window: its drops are legitimate."""
        self.bulk_steps += 1
        spec = MessageSpec("UpdateStream", MessageClass.USER, "stream/1")
        for _ in range(FANOUT_BASE):
            self.post("owner", to, spec, route=Route.DIRECT)

    def do_subscribe(self, subscriber: str, to: str) -> None:
        self.mesh.subscribe(subscriber, to, retries=self.base_params.subscribe_retries)

    def do_reject(self, to: str, count: int) -> None:
        self.mesh.inject(Fault(FaultKind.REJECT_NEXT, to, count=count))

    def do_timeout(self, to: str, count: int) -> None:
        self.mesh.inject(Fault(FaultKind.TIMEOUT_NEXT, to, count=count))

    def do_block(self, to: str, duration_ms: int) -> None:
        self.mesh.inject(Fault(FaultKind.BLOCK_HUB, to, duration_ms=duration_ms))

    def do_slow(self, to: str, duration_ms: int) -> None:
        self.mesh.inject(Fault(FaultKind.SLOW_DESTINATION, to, duration_ms=duration_ms))

    def do_remove(self, to: str) -> None:
        self.mesh.inject(Fault(FaultKind.REMOVE_TARGET, to))

    def do_stop(self, graceful: bool, racing: Sequence[tuple[str, Route]] = ()) -> None:
        """Stop the silo; `racing` posts are sent in the same instant, so their legs (and
        the NACKs they cause) are in flight while the stop runs."""
        for to, route in racing:
            self.post("client", to, MessageSpec("Request"), route=route)
        self.stopped = True
        self.mesh.stop(graceful=graceful)

    def do_advance(self, ms: int, schedule: list[int]) -> None:
        self.chooser.load(schedule)
        self.mesh.advance(ms)

    def play(self, name: str) -> None:
        """Replay a seed scenario's steps (its own `init` aside) on this run's hubs, so the
        known shapes are always among the runs and combine with the steps drawn after."""
        check_id, _, program = name.partition(":")
        for family, arguments in SEED_PROGRAMS[check_id][program]:
            if family == "init" or (family == "stop" and self.stopped):
                continue
            if family == "advance":
                self.mesh.advance(arguments["ms"])
            else:
                getattr(self, f"do_{family}")(**arguments)


# Rule families: the strategies of each rule's arguments.
_ANY_TARGET = st.sampled_from(HUBS + MISSING)
_HUB = st.sampled_from(HUBS)
_SENDER = st.sampled_from(SENDERS)
_COUNT = st.integers(1, 3)


def _family_arguments(plan: Plan) -> dict[str, dict[str, st.SearchStrategy[Any]]]:
    route = st.sampled_from(plan.routes)
    to = st.sampled_from(plan.targets)
    return {
        "user": {"sender": _SENDER, "to": to, "route": route, "count": _COUNT},
        "ignorable": {"sender": _SENDER, "to": to, "route": route, "count": _COUNT},
        "failure": {"sender": _SENDER, "to": to, "route": route, "lifecycle": st.booleans()},
        "anonymous": {
            "sender": _SENDER,
            "to": _HUB,
            "route": route,
            "message_class": st.sampled_from(["user", "ignorable", "system"]),
        },
        "flood": {
            "to": _HUB,
            "count": st.sampled_from([8, 30, 200]),
            "route": st.sampled_from([Route.DIRECT, Route.MONOLITH]),
        },
        "fanout": {"to": _HUB, "extra": st.integers(0, 50)},
        "storm": {"to": _HUB},
        "subscribe": {"subscriber": _SENDER, "to": st.sampled_from(MISSING + HUBS)},
        "reject": {"to": _HUB, "count": st.integers(1, 8)},
        "timeout": {"to": _HUB, "count": st.integers(1, 3)},
        "block": {"to": _HUB, "duration_ms": st.sampled_from([100, 1_000, 5_000, 40_000])},
        "slow": {"to": _ANY_TARGET, "duration_ms": st.sampled_from([5, 5_000, 45_000])},
        "remove": {"to": _HUB},
        "stop": {
            "graceful": st.sampled_from([True, False]),  # graceful first: it holds
            "racing": st.lists(st.tuples(to, route), max_size=3),
        },
    }


FAMILIES: tuple[str, ...] = tuple(_family_arguments(PLANS["INV1"]))


def _light_scenarios(check_ids: Sequence[str]) -> list[str]:
    """Seed scenarios `init` may start from: not the bulk ones (thousands of posts), which
    `run_invariant` runs once as explicit programs and the `fanout`/`storm` rules cover."""
    return [
        f"{c}:{name}"
        for c in check_ids
        for name, program in SEED_PROGRAMS[c].items()
        if not any(step in _BULK for step, _ in program)
    ]


# `rule` takes its argument strategies as keywords; typed loosely to pass them as a dict.
_rule: Any = rule


def _wrap(family: str, body: Callable[..., None]) -> Callable[..., None]:
    def step(self: MeshMachine, **arguments: Any) -> None:
        self.step()
        body(self, **arguments)

    step.__name__ = step.__qualname__ = family
    return step


def _is_enabled(family: str) -> Callable[[MeshMachine], bool]:
    if family == "stop":
        return lambda self: family in self.enabled and not self.stopped
    if family in _BULK:
        return lambda self: family in self.enabled and self.bulk_steps < MAX_BULK_STEPS
    return lambda self: family in self.enabled


def machine_class(
    check_id: str | Sequence[str],
    adapter_factory: AdapterFactory,
    *,
    params: CheckParams | None = None,
    diagram_path: Path | None = None,
    name: str | None = None,
    seed_scenarios: bool = True,
) -> type[MeshMachine]:
    """A fresh machine class checking `check_id` (one id, or several) on meshes from
    `adapter_factory`; its `TestCase` runs under pytest/unittest. `seed_scenarios=False`
    leaves the seed scenarios out of `init`, so only the drawn rules explore."""
    check_ids = (check_id,) if isinstance(check_id, str) else tuple(check_id)
    unknown = [c for c in check_ids if c not in PLANS]
    if unknown or not check_ids:
        raise ValueError(f"unknown check(s) {unknown} (known: {', '.join(CHECK_IDS)})")
    plan = Plan(
        frozenset().union(*(PLANS[c].core for c in check_ids)),
        frozenset().union(*(PLANS[c].extra for c in check_ids)),
        tuple(dict.fromkeys(r for c in check_ids for r in PLANS[c].routes)),
        tuple(dict.fromkeys(t for c in check_ids for t in PLANS[c].targets)),
    )
    families = plan.core | plan.extra
    arguments = _family_arguments(plan)
    toggled = sorted(plan.extra - plan.core)
    scenarios = _light_scenarios(check_ids) if seed_scenarios else []

    def init(
        self: MeshMachine,
        watermarks: tuple[int | None, ...],
        swarm: dict[str, bool],
        scenario: str | None,
    ) -> None:
        self.steps += 1
        self.start(watermarks, swarm)
        if scenario is not None:
            self.play(scenario)

    namespace: dict[str, Any] = {
        "check_ids": check_ids,
        "adapter_factory": staticmethod(adapter_factory),
        "base_params": params or CheckParams(),
        "plan": plan,
        "stats": RunStats(),
        "diagram_path": diagram_path,
        "init": initialize(
            watermarks=st.tuples(*(st.sampled_from(WATERMARKS) for _ in HUBS)),
            swarm=st.fixed_dictionaries({f: st.booleans() for f in toggled}),
            # None first: a shrunk failure names a seed scenario only when it needs one.
            scenario=st.sampled_from([None, *scenarios]),
        )(init),
        "advance": rule(
            ms=st.sampled_from([1, 250, 1_000, 30_000, 31_000]),
            schedule=st.lists(st.integers(0, 7), max_size=6),
        )(_wrap("advance", MeshMachine.do_advance)),
    }
    for family in sorted(families):
        body = getattr(MeshMachine, f"do_{family}")
        namespace[family] = precondition(_is_enabled(family))(
            _rule(**arguments[family])(_wrap(family, body))
        )
    class_name = name or "".join(check_ids) + "Machine"
    machine = type(class_name, (MeshMachine,), namespace)
    return machine
