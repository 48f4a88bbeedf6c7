"""The plan: what each check's state machine exercises, and the machine classes built from it.

`PLANS` names, per invariant, the rule families always on (`core`) and those the swarm
`init` rule toggles per run (`extra`), with the routes and targets traffic goes to;
`machine_class(check_id, adapter_factory)` turns a plan into a `RuleBasedStateMachine`
subclass of the driver (`invariants.dynamic.driver.MeshMachine`) whose rules are the
plan's families (each the workload's body for it, `invariants.dynamic.workload`), with
their argument strategies and preconditions.

- Each check gets the rule families its invariant needs, so a mesh breaking it is found in
  few examples and shrinks to a few steps; `init` may start a run with one of the check's
  seed scenarios (`invariants.dynamic.seed_programs`), so the known shapes are tried.
- Swarm: `init` switches each optional family (fault kinds among them) on or off for the
  run, so a shrunk failure carries only the families it needs.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import initialize, precondition, rule

from invariants.adapter import AdapterFactory, Capability, FaultKind, FirstChooser, Route
from invariants.adapter_calls import calling_adapter, factory_name
from invariants.capabilities import RECORDS, capabilities_of, family_needs, route_needs
from invariants.checks import CHECKS, CheckParams
from invariants.dynamic.chooser import CHANGE_POINTS, SCRIPTS, UNIFORM
from invariants.dynamic.driver import (
    BREAKER_THRESHOLDS,
    HUBS,
    MISSING,
    SENDERS,
    WATERMARKS,
    MeshMachine,
)
from invariants.dynamic.seed_programs import SEED_PROGRAMS, Program
from invariants.dynamic.workload import (
    BULK_FAMILIES,
    BURST_CLASSES,
    MAX_BULK_STEPS,
    Workload,
    with_routes,
)


@dataclass(frozen=True)
class Plan:
    """What a machine for one check exercises: families always on, and swarm-toggled ones."""

    core: frozenset[str]
    extra: frozenset[str]
    routes: tuple[Route, ...] = (Route.MONOLITH, Route.GRAIN, Route.DIRECT)
    targets: tuple[str, ...] = HUBS + MISSING  # where traffic is posted
    # Whether runs draw the envelope round trip (where the adapter offers it): the checks
    # that read what the envelope carries (its marker, its identity stamp).
    roundtrip: bool = False
    # Whether stops draw how long their racing legs last and when the host gives up: the
    # check that judges the stop's hold, and the one whose subscriptions must end with a
    # stop however long it holds. (Each draw more changes every later choice, so the other
    # plans' stops stay as they were.)
    holds: bool = False
    # Whether runs draw each hub's breaker threshold (where the adapter declares
    # `breaker_threshold`): the check whose storms and fan-outs are sized by it, which then
    # cost tens of posts, not thousands. Its seed programs keep the mesh's own threshold.
    breakers: bool = False
    # Families only the check's seed programs take: steps of the machine, never drawn by its
    # search (a family drawn more changes every later choice of the search).
    programs_only: frozenset[str] = frozenset()


# The network's faults, on in every plan: a mesh of many nodes can break any invariant
# between them (a rejection's word held past its caller's timeout, a call that times out, a
# stop racing legs to other nodes, a node rebuilt after a crash that forgets its hubs'
# figures or a removal). Only an adapter that declares NETWORK draws them. Switched per run
# like the plans' optional families, each was on in about one run in seven (`init`'s swarm
# and Hypothesis's own, one after the other), and a crash and the traffic after its rebuild
# met in one run in fourteen.
NETWORK_FAMILIES = frozenset(RECORDS[Capability.NETWORK].families)


def _plan(
    core: str,
    extra: str,
    routes: tuple[Route, ...] = Plan.routes,
    targets: tuple[str, ...] = Plan.targets,
    *,
    roundtrip: bool = False,
    holds: bool = False,
    breakers: bool = False,
    programs_only: str = "",
) -> Plan:
    return Plan(frozenset(core.split()) | NETWORK_FAMILIES, frozenset(extra.split()), routes,
                targets, roundtrip, holds, breakers, frozenset(programs_only.split()))


PLANS: Mapping[str, Plan] = {
    "INV1": _plan("anonymous failure user", "reject timeout block slow subscribe stop ignorable"),
    # INV2 draws the stop's hold too: racing legs that keep the silo stopping while its
    # subscriptions retry into refusals, so one waits out a backoff when the stop completes.
    "INV2": _plan("subscribe tied_call", "remove block slow stop user", holds=True),
    "INV3": _plan("flood user block ignorable", "slow remove stop anonymous chatter",
                  breakers=True),
    "INV4": _plan("user reject timeout aggregate tied_call", "block slow stop remove",
                  (Route.GRAIN,),
                  HUBS),
    "INV5": _plan("user stop slow",
                  "reject timeout block failure ignorable subscribe remove",
                  holds=True),
    "INV6": _plan("fanout storm user", "ignorable block stop", roundtrip=True, breakers=True),
    # INV7's seed programs subscribe and hold a hub too (a subscription's late answer is one
    # more message whose handler must not raise); its search draws neither.
    "INV7": _plan("ignorable failure user stop raising burst",
                  "slow reject timeout remove anonymous", roundtrip=True,
                  programs_only="subscribe block"),
}


# Rule families: the strategies of each rule's arguments.

# On a networked mesh, half the runs send every hub argument to one hub, drawn once per run
# (swarm testing over the targets, as `init`'s swarm is over the families): a story told
# across three steps at one node (a hub removed, its node crashed and rebuilt, a post to it)
# meets there in one run in nine otherwise. Each step still prints the hub it took; a
# missing target stays missing. None first: a shrunk failure is focused only when its
# steps must share a hub. (A mesh of one process keeps the draws it was measured on.)
_FOCUS = st.shared(st.one_of(st.none(), st.sampled_from(HUBS)), key="the run's focused hub")


def _target(targets: Sequence[str]) -> st.SearchStrategy[str]:
    """One of `targets`, or the run's focused hub in place of a hub where it has one."""
    return st.tuples(_FOCUS, st.sampled_from(targets)).map(
        lambda drawn: drawn[0] if drawn[0] is not None and drawn[1] in HUBS else drawn[1])


_SENDER = st.sampled_from(SENDERS)
_COUNT = st.integers(1, 3)


# A tie script, spent afresh at each tie instant (`ScriptedChooser`): half the draws any
# script, half one deviation from FIFO at one of the instant's first four choices, held for
# one to three choices in a row (FIFO before and after it). A race that needs one choice
# reordered and every later one left alone (a depth-1 schedule, in PCT's terms) is rare
# among dense scripts, whose later entries undo it; held for two choices, the deviation
# lets a chain of two steps overtake one callback (a callee's timer and its step, both
# ahead of its caller's timeout). Measured on the asyncio example: docs/asyncio.md.
_TIE_SCRIPTS = st.one_of(
    st.lists(st.integers(0, 7), max_size=12),
    st.builds(lambda at, run, alternative: [0] * at + [alternative] * run,
              st.integers(0, 3), st.integers(1, 3), st.integers(1, 7)),
)


# The run's schedule strategy (`ScriptedChooser.use`): the step scripts first (shrinking to
# them, and their empty lists to FIFO), then one to three change points among the run's
# first 64 ordering decisions (an example of the asyncio examples makes 7 to 32 of them,
# the median, at most 50: a point past the run's end is no deviation), then uniform
# choice. Drawn once per example: each explores the whole run, not a step's first choices.
# By name, so that a benchmark can measure one alone (`schedule_portfolio`).
SCHEDULE_STRATEGIES: dict[str, st.SearchStrategy[tuple[object, ...]]] = {
    SCRIPTS: st.just((SCRIPTS,)),
    CHANGE_POINTS: st.builds(
        lambda points: (CHANGE_POINTS, tuple(sorted(points))),
        st.lists(st.tuples(st.integers(0, 63), st.integers(1, 7)), min_size=1, max_size=3,
                 unique_by=lambda point: point[0]),
    ),
    UNIFORM: st.builds(lambda seed: (UNIFORM, seed), st.integers(0, 2**32 - 1)),
}
schedule_portfolio: tuple[str, ...] = tuple(SCHEDULE_STRATEGIES)  # the names drawn, in order


def _aim_rule() -> Callable[..., Any]:
    """Advance to just before one of the mesh's own timers falls due (`Workload.aim`): drawn for
    meshes that mark their timer ties (the asyncio kit's, whose loop knows its timers)."""
    return rule(timer=st.integers(0, 7), less_ms=st.sampled_from([1, 0, 2]),
                schedule=st.lists(st.integers(0, 7), max_size=6), ties=_TIE_SCRIPTS,
                hops=_HOPS)


def _advance_rule(capabilities: frozenset[Capability]) -> Callable[..., Any]:
    """How far each `advance` goes and its schedule; a script for the timer ties too where
    the mesh marks them (drawn only there: a draw more changes every later choice)."""
    ms = st.sampled_from([1, 250, 1_000, 30_000, 31_000])
    schedule = st.lists(st.integers(0, 7), max_size=6)
    if Capability.TIMER_TIES in capabilities:
        return rule(ms=ms, schedule=schedule, ties=_TIE_SCRIPTS)
    return rule(ms=ms, schedule=schedule)


# A slowdown that ends on one of the mesh's own waits, less a hop or two, lands a call or an
# answer in the instant its caller's timeout fires: a timer tie. Drawn for meshes that mark
# their ties, where the tie script explores them (elsewhere a draw more would only change
# every later choice).
_SLOWDOWNS = (5, 5_000, 45_000)
_TIE_OFFSETS_MS = (0, 1, 2)
_NETWORK_FAULT_MS = st.sampled_from([100, 3_000, 8_000])
# The faults `cut_call` makes, the two-way partition first (it shrinks there).
_CUTS = (FaultKind.PARTITION_NODE, FaultKind.ISOLATE_OUTBOUND, FaultKind.HOLD_LINKS,
         FaultKind.CRASH_NODE)
# And one or two of the mesh's own hops, as its trace shows them (a request and its
# answer travel two): none first, so a shrunk tie names the hops only where it needs them.
_HOPS = st.sampled_from([0, 1, 2])


def tie_slowdowns(params: CheckParams | None) -> tuple[int, ...]:
    """The slowdowns drawn: the fixed ones, then each of the mesh's waits (response and
    subscribe timeout) less 0, 1 and 2 ms."""
    params = params or CheckParams()
    waits = (params.response_timeout_ms, params.subscribe_timeout_ms)
    at_waits = (wait - offset for wait in waits for offset in _TIE_OFFSETS_MS)
    return tuple(dict.fromkeys((*_SLOWDOWNS, *(ms for ms in at_waits if ms > 0))))


def _tied_call_arguments(plan: Plan, hub: st.SearchStrategy[str]
                         ) -> dict[str, st.SearchStrategy[Any]]:
    """A call slowed to land as its caller's wait ends: a subscription against its subscribe
    timeout where the plan always subscribes (its check is about subscriptions); else a
    grain call against its response timeout where the plan routes grain calls, and a
    subscription where it may subscribe (a plan with neither gets a slowed call on its
    route). Half the draws spent on a wait the check does not read would halve the ties."""
    if "subscribe" in plan.core:
        waits = ["subscribe"]
    else:
        waits = [wait for wait, offered in (("response", Route.GRAIN in plan.routes),
                                            ("subscribe", "subscribe" in plan.extra))
                 if offered]
    return {
        "sender": _SENDER,
        "to": hub,
        "wait": st.sampled_from(waits or ["response"]),
        "hop_ms": st.sampled_from(_TIE_OFFSETS_MS),
        "route": st.just(Route.GRAIN if Route.GRAIN in plan.routes else plan.routes[0]),
        "hops": _HOPS,
    }


def _family_arguments(
    plan: Plan, at_waits: tuple[int, ...] | None = None, *, focused: bool = False,
) -> dict[str, dict[str, st.SearchStrategy[Any]]]:
    """Each family's argument strategies; with `at_waits` (a mesh that marks its timer
    ties: `tie_slowdowns`) slowdowns are drawn from those, on the targets the plan posts to;
    `focused` (a networked mesh): hub arguments may take the run's focused hub."""
    target = _target if focused else st.sampled_from
    hub, any_target = target(HUBS), target(HUBS + MISSING)
    route = st.sampled_from(plan.routes)
    to = target(plan.targets)
    slow = ({"to": any_target, "duration_ms": st.sampled_from(_SLOWDOWNS)} if at_waits is None
            else {"to": to, "duration_ms": st.sampled_from(at_waits)})
    # A call that crosses the network goes through a router (the direct route hands it
    # to its target's own intake).
    routed = [r for r in plan.routes if r is not Route.DIRECT]
    routed_route = st.sampled_from(routed) if routed else route
    # Bulk steps go straight to the intake or through the hierarchical router (packaged,
    # so the identity stamp is on the path); the direct route first, it shrinks there.
    bulk_route = st.sampled_from(
        [r for r in (Route.DIRECT, Route.MONOLITH) if r in plan.routes] or [Route.DIRECT]
    )
    return {
        "user": {"sender": _SENDER, "to": to, "route": route, "count": _COUNT},
        "burst": {"sender": _SENDER, "to": hub, "route": route,
                  "classes": st.lists(st.sampled_from(BURST_CLASSES), min_size=2, max_size=4)},
        "tied_call": _tied_call_arguments(plan, hub),
        "ignorable": {"sender": _SENDER, "to": to, "route": route, "count": _COUNT},
        "raising": {"sender": _SENDER, "to": hub},
        "failure": {"sender": _SENDER, "to": to, "route": route, "lifecycle": st.booleans()},
        "anonymous": {
            "sender": _SENDER,
            "to": hub,
            "route": route,
            "message_class": st.sampled_from(["user", "ignorable", "system"]),
        },
        "flood": {
            "to": hub,
            "count": st.sampled_from([8, 30, 200]),
            "route": st.sampled_from([Route.DIRECT, Route.MONOLITH]),
        },
        "fanout": {"to": hub, "extra": st.integers(0, 50), "route": bulk_route},
        "storm": {"to": hub, "route": bulk_route, "edges": st.booleans()},
        "chatter": {"to": hub, "route": bulk_route},
        "subscribe": {"subscriber": _SENDER, "to": target(MISSING + HUBS)},
        "reject": {"to": hub, "count": st.integers(1, 8)},
        "timeout": {"to": hub, "count": st.integers(1, 3)},
        "aggregate": {"to": hub, "count": st.integers(1, 3), "timeout_first": st.booleans()},
        "block": {"to": hub, "duration_ms": st.sampled_from([100, 1_000, 5_000, 40_000])},
        "slow": slow,
        "remove": {"to": hub},
        # The network's (`Capability.NETWORK`): shorter than a response timeout, about one
        # (a call caught on either side of it), and longer than its retries.
        "partition": {"to": hub, "duration_ms": _NETWORK_FAULT_MS, "one_way": st.booleans()},
        "hold_links": {"to": hub, "duration_ms": _NETWORK_FAULT_MS},
        "crash": {"to": hub, "duration_ms": _NETWORK_FAULT_MS,
                  "replay_after": st.sampled_from([None, "rebuild", "timeout"])},
        "cut_call": {"sender": _SENDER, "to": hub, "cut": st.sampled_from(_CUTS),
                     "duration_ms": _NETWORK_FAULT_MS, "hops": _HOPS,
                     "route": routed_route},
        "stop": {
            "graceful": st.sampled_from([True, False]),  # graceful first: it holds
            "racing": st.lists(st.tuples(to, route), max_size=3),
            **({
                "slow_ms": st.sampled_from([0, 5_000, 45_000]),
                # When the host gives up on a graceful stop (None first: never): a second
                # into the hold, once a budget-long hold is over, in the stop's own instant
                # before its first stage, or a millisecond after it began.
                "give_up_ms": st.sampled_from([None, 1_000, 31_000, 0, 1]),
                # Its racing posts in its own instant, or a hop or two before it (legs by
                # then on a mesh that dispatches as its loop runs).
                "lead_hops": _HOPS,
            } if plan.holds else {}),
        },
    }


FAMILIES: tuple[str, ...] = tuple(_family_arguments(PLANS["INV1"]))

# A checker with no plan of its own (a new one) is driven by every family, user traffic
# always on and the rest swarm-toggled: slower to find a bug than a tailored plan, never
# blind to one.
DEFAULT_PLAN = Plan(frozenset({"user"}) | NETWORK_FAMILIES,
                    frozenset(FAMILIES) - {"user"} - NETWORK_FAMILIES, roundtrip=True,
                    holds=True, breakers=True)


def plan_of(check_id: str) -> Plan:
    return PLANS.get(check_id, DEFAULT_PLAN)


# The rule families and routes only an adapter with the capability can take (its record's).
FAMILY_NEEDS: Mapping[str, Capability] = family_needs()
ROUTE_NEEDS: Mapping[Route, Capability] = route_needs()
# A seed scenario `init` replays keeps its shape on an adapter without the route it names:
# the monolith router carries the same legs (in flight at a stop, say) the grain route
# would have, so the scenario is replayed through it rather than left out.
ROUTE_STAND_INS: Mapping[Route, Route] = {Route.GRAIN: Route.MONOLITH}


def stand_ins(capabilities: frozenset[Capability]) -> dict[Route, Route]:
    """The routes the adapter's capabilities do not offer, each with its stand-in."""
    return {r: s for r, s in ROUTE_STAND_INS.items() if ROUTE_NEEDS[r] not in capabilities}


def within(plan: Plan, capabilities: frozenset[Capability]) -> Plan:
    """`plan` without the families and routes the adapter's capabilities do not offer."""
    def offered(need: Capability | None) -> bool:
        return need is None or need in capabilities

    routes = tuple(r for r in plan.routes if offered(ROUTE_NEEDS.get(r)))
    return Plan(
        frozenset(f for f in plan.core if offered(FAMILY_NEEDS.get(f))),
        frozenset(f for f in plan.extra if offered(FAMILY_NEEDS.get(f))),
        routes or (Route.DIRECT,),
        plan.targets,
        plan.roundtrip and Capability.ENVELOPE_ROUNDTRIP in capabilities,
        plan.holds,
        plan.breakers and Capability.BREAKER_THRESHOLD in capabilities,
        frozenset(f for f in plan.programs_only if offered(FAMILY_NEEDS.get(f))),
    )


def program_runs_on(program: Program, capabilities: frozenset[Capability]) -> bool:
    """Whether every step of a seed program is one the adapter's capabilities offer."""
    for family, arguments in program:
        if arguments.get("roundtrip") and Capability.ENVELOPE_ROUNDTRIP not in capabilities:
            return False
        needed = FAMILY_NEEDS.get(family)
        if needed is not None and needed not in capabilities:
            return False
        routes = [arguments.get("route"), *(r for _, r in arguments.get("racing", ()))]
        if any(r in ROUTE_NEEDS and ROUTE_NEEDS[r] not in capabilities for r in routes):
            return False
    return True


def seed_programs_for(check_id: str, capabilities: frozenset[Capability]) -> dict[str, Program]:
    """The check's seed programs as the adapter can take them: a route it lacks replaced
    by its stand-in, a program with a step it cannot take left out."""
    routes = stand_ins(capabilities)
    programs = {
        name: with_routes(program, routes)
        for name, program in SEED_PROGRAMS.get(check_id, {}).items()
    }
    return {name: p for name, p in programs.items() if program_runs_on(p, capabilities)}


def _light_scenarios(
    check_ids: Sequence[str], capabilities: frozenset[Capability]
) -> list[str]:
    """Seed scenarios `init` may start from: not the bulk ones (thousands of posts), which
    `run_invariant` runs once as explicit programs and the `fanout`/`storm` rules cover,
    nor those with steps the adapter cannot take (a route it lacks has its stand-in)."""
    return [
        f"{c}:{name}"
        for c in check_ids
        for name, program in seed_programs_for(c, capabilities).items()
        if not any(step in BULK_FAMILIES for step, _ in program)
    ]


# `rule` and `initialize` take their argument strategies as keywords; typed loosely to
# pass them as a dict.
_rule: Any = rule
_initialize: Any = initialize


def _wrap(family: str) -> Callable[..., None]:
    """The machine's step for `family`: recorded, then the workload's body, within the
    step budget."""
    body = getattr(Workload, family)

    def step(self: MeshMachine, **arguments: Any) -> None:
        self.step(family, arguments)
        self.acting(lambda: body(self.workload, **arguments), f"step {family!r}")

    step.__name__ = step.__qualname__ = family
    return step


def _is_enabled(family: str) -> Callable[[MeshMachine], bool]:
    if family == "stop":
        return lambda self: family in self.enabled and not self.stopped
    if family in BULK_FAMILIES:
        return lambda self: (family in self.enabled
                             and self.workload.bulk_steps[family] < MAX_BULK_STEPS)
    return lambda self: family in self.enabled


def machine_class(
    check_id: str | Sequence[str],
    adapter_factory: AdapterFactory,
    *,
    params: CheckParams | None = None,
    diagram_path: Path | None = None,
    name: str | None = None,
    seed_scenarios: bool = True,
    capabilities: frozenset[Capability] | None = None,
    steps: Collection[str] = (),
) -> type[MeshMachine]:
    """A fresh machine class checking `check_id` (one id, or several) on meshes from
    `adapter_factory`; its `TestCase` runs under pytest/unittest. `seed_scenarios=False`
    leaves the seed scenarios out of `init`, so only the drawn rules explore. Families and
    routes the adapter's `capabilities` (by default, what one of its adapters declares) do
    not offer are left out; the envelope round trip is drawn per run where offered.
    `steps`: families a program run on the machine takes beyond its plan (one recorded
    while driving another check's plan), added as steps, never as rules."""
    if capabilities is None:
        with calling_adapter(factory_name(adapter_factory), "from its factory"):
            capabilities = capabilities_of(adapter_factory(FirstChooser()))
    check_ids = (check_id,) if isinstance(check_id, str) else tuple(check_id)
    unknown = [c for c in check_ids if c not in CHECKS]
    if unknown or not check_ids:
        raise ValueError(f"unknown check(s) {unknown} (known: {', '.join(CHECKS)})")
    plan = _merged_plan(check_ids, capabilities)
    ties = Capability.TIMER_TIES in capabilities
    arguments = _family_arguments(plan, tie_slowdowns(params) if ties else None,
                                  focused=Capability.NETWORK in capabilities)
    scenarios = _light_scenarios(check_ids, capabilities) if seed_scenarios else []
    namespace: dict[str, Any] = {
        "check_ids": check_ids,
        "adapter_factory": staticmethod(adapter_factory),
        "base_params": params or CheckParams(),
        "core_families": plan.core,
        "diagram_path": diagram_path,
        "stand_ins": stand_ins(capabilities),
        "init": _init_rule(plan, scenarios, ties),
        "advance": _advance_rule(capabilities)(_wrap("advance")),
    }
    if ties:
        namespace["aim"] = _aim_rule()(_wrap("aim"))
    for family in sorted(plan.core | plan.extra):
        namespace[family] = precondition(_is_enabled(family))(
            _rule(**arguments[family])(_wrap(family))
        )
    only_steps = plan.programs_only | (frozenset(steps) & frozenset(FAMILIES))
    for family in sorted(only_steps - plan.core - plan.extra):  # steps, not rules
        namespace[family] = _wrap(family)
    class_name = name or "".join(check_ids) + "Machine"
    return type(class_name, (MeshMachine,), namespace)


def _merged_plan(check_ids: Sequence[str], capabilities: frozenset[Capability]) -> Plan:
    """The checks' plans as one, within what the adapter's capabilities offer."""
    plans = [plan_of(c) for c in check_ids]
    return within(Plan(
        frozenset().union(*(p.core for p in plans)),
        frozenset().union(*(p.extra for p in plans)),
        tuple(dict.fromkeys(r for p in plans for r in p.routes)),
        tuple(dict.fromkeys(t for p in plans for t in p.targets)),
        any(p.roundtrip for p in plans),
        any(p.holds for p in plans),
        any(p.breakers for p in plans),
        frozenset().union(*(p.programs_only for p in plans)),
    ), capabilities)


def _init_rule(plan: Plan, scenarios: Sequence[str], ties: bool) -> Any:
    """`init`: the hubs' watermarks, which optional families are on, a seed scenario to
    start from, (where the plan reads envelopes) the envelope round trip, (where it
    storms) the hubs' breaker thresholds and (where the mesh marks its timer ties: the
    asyncio kit's loop) the run's schedule strategy."""

    def init(
        self: MeshMachine,
        watermarks: tuple[int | None, ...],
        swarm: dict[str, bool],
        scenario: str | None,
        roundtrip: bool = False,
        breaker_thresholds: tuple[int, ...] = (),
        schedule: tuple[object, ...] = (SCRIPTS,),
    ) -> None:
        arguments: dict[str, object] = {
            "watermarks": watermarks, "swarm": swarm, "scenario": scenario,
            "roundtrip": roundtrip, "breaker_thresholds": breaker_thresholds,
        }
        if schedule != (SCRIPTS,):  # programs that never drew one stay as they were
            arguments["schedule"] = schedule
        self.step("init", arguments)

        def begin() -> None:
            self.chooser.use(schedule)
            self.start(watermarks, swarm, roundtrip=roundtrip,
                       breaker_thresholds=breaker_thresholds)
            if scenario is not None:
                self.workload.play(scenario)

        self.acting(begin, "step 'init'")

    init_arguments: dict[str, st.SearchStrategy[Any]] = {
        "watermarks": st.tuples(*(st.sampled_from(WATERMARKS) for _ in HUBS)),
        "swarm": st.fixed_dictionaries({f: st.booleans() for f in sorted(plan.extra - plan.core)}),
        # None first: a shrunk failure names a seed scenario only when it needs one.
        "scenario": st.sampled_from([None, *scenarios]),
    }
    if plan.roundtrip:
        # Off first: a shrunk failure round-trips its envelopes only when it must. (Only
        # plans that read the envelope draw it: a draw more changes every later choice.)
        init_arguments["roundtrip"] = st.booleans()
    if plan.breakers:
        init_arguments["breaker_thresholds"] = st.tuples(
            *(st.sampled_from(BREAKER_THRESHOLDS) for _ in HUBS))
    if ties:  # a loop whose orders are production's (the kit's): its strategies
        init_arguments["schedule"] = st.one_of(
            *(SCHEDULE_STRATEGIES[name] for name in schedule_portfolio))
    return _initialize(**init_arguments)(init)
