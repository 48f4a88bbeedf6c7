"""The driver: a Hypothesis state machine that drives any mesh through the adapter protocol.

`MeshMachine` drives: it starts a fresh mesh (hubs with drawn watermarks, the sender's
hub), runs each step's body within the step budget, replays seed scenarios (`play`), and
at teardown runs the mesh to quiescence within a bound. Its `do_<family>` methods are the
rule bodies, what each family of drawn steps does to the mesh: post user, can-be-ignored,
failure and anonymous traffic, flood with many distinct keys, fan out and storm on one
breaker key, subscribe, make a call land as its caller's wait ends, arm faults (rejections,
timeouts, aggregate answers, blocked turns, slowed destinations, removed targets), stop the
silo, and move the clock. Which of them a check's machine has, as rules, is the plan's
business (`invariants.dynamic.plans`). Its `Judge` (`invariants.dynamic.judge`) holds the
monitors: fed the new events after every step, told every post, fault and stop the machine
makes as a harness fact, asked for violations after every step and at the end.

Every scheduling choice comes from Hypothesis: each `advance` step draws a short schedule
the mesh's `Chooser` reads (`ScriptedChooser`), and every fault is a drawn rule.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar, cast

from hypothesis.stateful import RuleBasedStateMachine, invariant

from invariants.adapter import (
    AdapterFactory,
    ConfigurableBreakerAdapter,
    Fault,
    FaultKind,
    MeshAdapter,
    MessageSpec,
    RoundTrippingAdapter,
    Route,
)
from invariants.adapter_calls import ClockError, calling_adapter, factory_name
from invariants.capabilities import capabilities_of
from invariants.checks import (
    CheckParams,
    HubsMade,
    Injected,
    Posted,
    RoundTripSet,
    StopAsked,
    Subscribed,
)
from invariants.dynamic.chooser import ScriptedChooser
from invariants.dynamic.judge import Judge
from invariants.dynamic.report import InvariantViolated
from invariants.dynamic.rule_swarm import keep_on
from invariants.dynamic.seed_programs import SEED_PROGRAMS, Program, Step, resolved
from invariants.step_budget import step_budgets, within_budget
from invariants.trace import EventKind, MessageClass

HUBS = ("h0", "h1", "h2")
MISSING = ("h0/gone", "ghost")  # under a live prefix, and nowhere at all
SENDERS = ("client", "peer")
# The senders with a hub of their own: an answer to "peer" lands at its sender and must be
# accepted there; one to "client" finds no hub (a sender that has gone).
SENDER_HUBS = ("peer",)
WATERMARKS = (4, 25, None)  # None: the mesh's default
# Breaker thresholds drawn per hub where the mesh takes one (`breaker_threshold`): a storm
# on 8 is some twenty posts; the seed programs storm the mesh's own threshold.
BREAKER_THRESHOLDS = (8, 50)
LIVENESS_LIMIT_MS = 10 * 60 * 1000  # teardown runs to quiescence within this bound
# Steps of each bulk family per run (thousands of posts each): one fan-out and one storm
# may share a run, so every run of INV6 meets both of its shapes.
MAX_BULK_STEPS = 1
BULK_FAMILIES = frozenset({"fanout", "storm", "chatter"})
# A post's arrival at its target's intake: one of these follows each offer.
_INTAKE = frozenset({EventKind.ENQUEUED, EventKind.REJECTED, EventKind.GATED,
                     EventKind.DROPPED, EventKind.SHED})
HEARTBEAT = MessageSpec("Heartbeat", MessageClass.IGNORABLE)
# What a burst mixes: a request, a control message, chatter.
BURST_MESSAGES: Mapping[str, MessageSpec] = {
    "user": MessageSpec("Request"),
    "lifecycle": MessageSpec("ShutdownRequest", MessageClass.LIFECYCLE),
    "ignorable": HEARTBEAT,
}
BURST_CLASSES: tuple[str, ...] = tuple(BURST_MESSAGES)
RAISING = MessageSpec("FaultingRequest", handler_raises=True)


def with_routes(program: Program, stand_ins: Mapping[Route, Route]) -> Program:
    """`program` with each route in `stand_ins` (its own and its racing posts') replaced."""
    if not stand_ins:
        return program

    def route(r: Route) -> Route:
        return stand_ins.get(r, r)

    steps = []
    for family, arguments in program:
        changed = dict(arguments)
        if "route" in changed:
            changed["route"] = route(changed["route"])
        if "racing" in changed:
            changed["racing"] = [(to, route(r)) for to, r in changed["racing"]]
        steps.append((family, changed))
    return tuple(steps)


class MeshMachine(RuleBasedStateMachine):
    """The shared driver; `machine_class` adds the rules a check needs."""

    check_ids: ClassVar[tuple[str, ...]] = ()
    adapter_factory: ClassVar[AdapterFactory]
    base_params: ClassVar[CheckParams] = CheckParams()
    core_families: ClassVar[frozenset[str]] = frozenset()  # on in every run
    diagram_path: ClassVar[Path | None] = None
    # Routes the adapter lacks, and the one a replayed seed scenario takes instead.
    stand_ins: ClassVar[Mapping[Route, Route]] = {}

    def __init__(self) -> None:
        super().__init__()
        keep_on(self, self.always_on_rules())
        self.chooser = ScriptedChooser()
        self.adapter: MeshAdapter | None = None
        self.judge = Judge(self.check_ids, self.base_params, self.diagram_path)
        self.params = self.base_params  # the run's figures, once `start` has made its hubs
        self.enabled: frozenset[str] = frozenset()
        # The steps run so far (`init` included) as a program `run_program` replays: what
        # a bystander check's first violation is recorded with.
        self.executed: list[Step] = []
        self.stopped = False
        self.failed = False  # an error was raised: teardown only cleans up
        self.budgets = step_budgets()  # resolved once for the run, handed to each step
        self.flood_keys = 0
        self.bulk_steps: Counter[str] = Counter()  # steps per bulk family
        # Posts through a router (delivery id -> when), from which the mesh's own hop is
        # read (`hop_ms`), and that hop once seen.
        self._routed: dict[str, int] = {}
        self._hop_ms: int | None = None

    @classmethod
    def always_on_rules(cls) -> frozenset[str]:
        """The rules no run goes without: the plan's core families and the clock."""
        return cls.core_families | ({"advance"} if hasattr(cls, "advance") else set())

    # Driving ----------------------------------------------------------------------------

    @property
    def mesh(self) -> MeshAdapter:
        if self.adapter is None:
            raise RuntimeError("the init rule has not run")
        return self.adapter

    def start(
        self, watermarks: Sequence[int | None], swarm: Mapping[str, bool], *,
        roundtrip: bool = False, breaker_thresholds: Sequence[int] = (),
    ) -> None:
        """A fresh mesh with the drawn watermarks, breaker thresholds (drawn only for an
        adapter declaring `breaker_threshold`; none: the mesh's own), families and (where
        the adapter declares it) envelope round trip, which stays on for the whole run."""
        self.enabled = self.core_families | {name for name, on in swarm.items() if on}
        adapter = self.adapter = type(self).adapter_factory(self.chooser)
        thresholds = dict(zip(HUBS, breaker_thresholds, strict=False))
        for hub, watermark in zip(HUBS, watermarks, strict=True):
            if hub in thresholds:  # drawn only where the adapter declares the capability
                cast(ConfigurableBreakerAdapter, adapter).create_hub(
                    hub, watermark=watermark, breaker_threshold=thresholds[hub])
            else:
                adapter.create_hub(hub, watermark=watermark)
        for hub in SENDER_HUBS:
            adapter.create_hub(hub)
        base = self.base_params
        configured = {h: w for h, w in zip(HUBS, watermarks, strict=True) if w is not None}
        params = self.params = replace(
            base, watermarks={**base.watermarks, **configured},
            breaker_thresholds={**base.breaker_thresholds, **thresholds},
        )
        self.judge.watch(params, capabilities_of(adapter))
        self.judge.tell(HubsMade(HUBS + SENDER_HUBS, adapter.now_ms(), self.judge.fed))
        if roundtrip:
            if not isinstance(adapter, RoundTrippingAdapter):
                raise TypeError(f"{type(adapter).__name__} declares the envelope_roundtrip "
                                "capability but has no set_envelope_roundtrip(on) method")
            adapter.set_envelope_roundtrip(True)
            self.judge.tell(RoundTripSet(True, adapter.now_ms(), self.judge.fed))

    def post(
        self,
        sender: str,
        target: str,
        spec: MessageSpec,
        *,
        identity: str | None = "user",
        route: Route = Route.MONOLITH,
    ) -> str:
        mesh = self.mesh
        delivery_id = mesh.post(sender, target, spec, identity=identity, route=route)
        if route is not Route.DIRECT and self._hop_ms is None:
            self._routed[delivery_id] = mesh.now_ms()
        # Told after the post returns: the fact precedes the events not yet fed, its own
        # among them (`seq` is a lower bound, exact enough for facts looked up by id).
        self.judge.tell(Posted(delivery_id, sender, target, spec.type_name, spec.message_class,
                               spec.diagnostic_key, identity, route, mesh.now_ms(),
                               self.judge.fed, spec.handler_raises))
        return delivery_id

    def inject(self, fault: Fault) -> None:
        self.judge.tell_in_place(self.mesh, Injected(
            fault.kind, fault.target, fault.count, fault.duration_ms, self.mesh.now_ms(), 0,
            fault.timeout_first))
        self.mesh.inject(fault)

    def _clock_text(self) -> str:
        return f"{self.adapter.now_ms()} ms" if self.adapter is not None else "the start"

    def step(self, name: str, arguments: Mapping[str, Any]) -> None:
        """Record a step about to run, as `(rule, arguments)`."""
        self.executed.append((name, dict(arguments)))

    def acting(self, body: Callable[[], None], what: str = "a step") -> None:
        """Run one step's body within the step budget; if the mesh or adapter raises (or
        hangs), or the run is interrupted, the run is over: teardown must not judge a
        half-done step (its liveness verdict would hide the exception or the interrupt)."""
        try:
            with (self.calling(f"in {what}"),
                  within_budget(f"{what} at {self._clock_text()}", self.budgets)):
                body()
        except InvariantViolated:
            raise
        except BaseException:
            self.failed = True
            raise

    def calling(self, where: str) -> AbstractContextManager[None]:
        """A call into the adapter: a `SystemExit` it raises, or a `KeyboardInterrupt` of
        its own, is an `AdapterExited` naming it (a real interrupt passes through)."""
        return calling_adapter(factory_name(type(self).adapter_factory), where)

    # Judging (`Judge`) ------------------------------------------------------------------

    @invariant()
    def safety(self) -> None:
        if self.adapter is None:
            return
        self.acting(lambda: self.judge.feed(self.mesh), "trace() after a step")
        with self.calling("after a step"):
            self.judge.verify(self.mesh, self.executed, final=False)

    def teardown(self) -> None:
        # Teardown runs in the `finally` of every run (Hypothesis', `run_program`'s): with
        # an interrupt on its way up (a signal outside a step), there is nothing to judge,
        # and a verdict raised here would take the interrupt's place.
        interrupted = isinstance(sys.exc_info()[1], KeyboardInterrupt)
        if self.adapter is None or self.failed or self.judge.failed or interrupted:
            return
        with self.calling("at teardown"):
            self._settle()

    def _settle(self) -> None:
        """Teardown's judgement: run to quiescence within the bound, then the final checks."""
        before = self.mesh.now_ms()
        with within_budget(f"run_until_idle({LIVENESS_LIMIT_MS}) at teardown, {before} ms",
                           self.budgets):
            quiescent = self.mesh.run_until_idle(LIVENESS_LIMIT_MS)
        now = self.mesh.now_ms()
        if not before <= now <= before + LIVENESS_LIMIT_MS:
            raise ClockError(f"{type(self.mesh).__name__}.run_until_idle("
                             f"{LIVENESS_LIMIT_MS}) moved virtual time from {before} ms to "
                             f"{now} ms, outside [{before}, {before + LIVENESS_LIMIT_MS}]")
        with within_budget(f"trace() at teardown, {now} ms", self.budgets):
            self.judge.feed(self.mesh)
        self.judge.harvest()
        self.judge.coverage.report(quiescent)
        self.judge.verify(self.mesh, self.executed, final=True)

    # The families' bodies: what each drawn step does to the mesh ------------------------

    def do_advance(self, ms: int, schedule: list[int], ties: Sequence[int] = ()) -> None:
        self.chooser.load(schedule, ties)
        self.advance_clock(ms)

    def hop_ms(self) -> int:
        """The mesh's own hop: the least time a post through a router took to reach its
        target's intake, as the trace showed it (1 ms until one has been seen)."""
        if self._hop_ms is None and self._routed:
            arrived = [event.time_ms - self._routed[event.delivery_id]
                       for event in self.mesh.trace()
                       if event.kind in _INTAKE and event.delivery_id in self._routed]
            if any(ms > 0 for ms in arrived):
                self._hop_ms = min(ms for ms in arrived if ms > 0)
                self._routed.clear()
        return self._hop_ms or 1

    def do_aim(self, timer: int, less_ms: int, schedule: list[int],
               ties: Sequence[int] = (), hops: int = 0) -> None:
        """Advance to `less_ms`, and `hops` of the mesh's own hops (`hop_ms`), before the
        instant one of the mesh's own armed timers falls due (the `timer`-th such instant,
        counted modulo how many there are; a plain 1 ms when none is armed that far ahead):
        the next step's work then lands as that timer fires, after that much travel (0: in
        its instant, once it has run). A race between a mesh's timer and the work landing
        with it needs them due together, which drawn durations rarely give and aiming
        always does, whatever the mesh's own numbers."""
        less_ms += hops * self.hop_ms() if hops else 0
        mesh = self.mesh
        now = mesh.now_ms()
        due = getattr(mesh, "timers_due_ms", None)
        instants = [t - less_ms for t in (due() if callable(due) else ()) if t - less_ms > now]
        self.do_advance(instants[timer % len(instants)] - now if instants else 1, schedule, ties)

    def advance_clock(self, ms: int) -> None:
        """`advance(ms)`, and the virtual clock checked: the harness knows where it must be."""
        mesh = self.mesh
        before = mesh.now_ms()
        mesh.advance(ms)
        now = mesh.now_ms()
        if now != before + ms:
            raise ClockError(f"{type(mesh).__name__}.advance({ms}) moved virtual time from "
                             f"{before} ms to {now} ms, not to {before + ms} ms")

    def play(self, name: str) -> None:
        """Replay a seed scenario's steps (its own `init` aside) on this run's hubs, so the
        known shapes are always among the runs and combine with the steps drawn after."""
        check_id, _, program = name.partition(":")
        steps = resolved(with_routes(SEED_PROGRAMS[check_id][program], self.stand_ins),
                         self.base_params)
        for family, arguments in steps:
            if family == "init" or (family == "stop" and self.stopped):
                continue
            if family == "advance":
                self.advance_clock(arguments["ms"])
            else:
                getattr(self, f"do_{family}")(**arguments)

    def do_user(self, sender: str, to: str, route: Route, count: int) -> None:
        for _ in range(count):
            self.post(sender, to, MessageSpec("Request"), route=route)

    def do_burst(self, sender: str, to: str, route: Route, classes: list[str]) -> None:
        """One sender's posts to one target on one route, back to back, of the classes
        drawn: the order a mesh promises its sender (INV7) covers every class, and a mesh
        that lets one class overtake another shows it only on such a mix."""
        for name in classes:
            self.post(sender, to, BURST_MESSAGES[name], route=route)

    def do_raising(self, sender: str, to: str) -> None:
        """A payload whose handler raises, then an ordinary one behind it, posted straight
        to the hub's intake: the hub must go on to the second."""
        self.post(sender, to, RAISING, route=Route.DIRECT)
        self.post(sender, to, MessageSpec("Request"), route=Route.DIRECT)

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
        # Lifecycle traffic is can-be-ignored too, and must never be shed: one behind the flood.
        self.post("prober", to, MessageSpec("ShutdownRequest", MessageClass.LIFECYCLE),
                  route=route)

    def past_threshold(self, hub: str) -> int:
        """One post more than `hub`'s breaker admits per key per window: a wrong key trips."""
        return self.params.threshold_at(hub) + 1

    def do_fanout(self, to: str, extra: int, route: Route = Route.DIRECT) -> None:
        """One sender, target and type about many payload identities, in one window."""
        self.bulk_steps["fanout"] += 1
        for i in range(self.past_threshold(to) + extra):
            spec = MessageSpec("CreateOrUpdateNode", MessageClass.USER, f"node/{i}")
            self.post("importer", to, spec, route=route)

    def do_storm(self, to: str, route: Route = Route.DIRECT, edges: bool = False) -> None:
        """One key ramping up to a storm. A fresh key filled to the threshold in its first
        window (none may be dropped) and, in that window, one post on the same target, type
        and identity from another sender (a key of its own: past the threshold only for a
        breaker that leaves the sender out). Then either (`edges` false) once the window and
        cooldown have passed, past the threshold again within one window, until the key
        trips; or (`edges`) one post as the first window closes (a new window: admitted),
        that window filled to the threshold and one post a millisecond before it closes
        (it trips). Its drops are legitimate; then one post 1 ms before the cooldown ends
        (still dropped) and one as it ends (admitted again). Either way the same number of
        posts: a shape costs posts, never a choice."""
        self.bulk_steps["storm"] += 1
        spec = MessageSpec("UpdateStream", MessageClass.USER, "stream/1")
        params = self.params
        window = params.breaker_window_ms
        for _ in range(params.threshold_at(to)):
            self.post("owner", to, spec, route=route)
        self.post("co-owner", to, spec, route=route)
        if edges:
            self.mesh.advance(window)
            self.post("owner", to, spec, route=route)
            for _ in range(params.threshold_at(to) - 1):
                self.post("owner", to, spec, route=route)
            self.mesh.advance(max(window - 1, 0))
            self.post("owner", to, spec, route=route)
        else:
            self.mesh.advance(window + params.breaker_cooldown_ms + 1)
            for _ in range(self.past_threshold(to)):
                self.post("owner", to, spec, route=route)
        self.mesh.advance(max(params.breaker_cooldown_ms - 1, 0))
        self.post("owner", to, spec, route=route)
        self.mesh.advance(1)
        self.post("owner", to, spec, route=route)

    def do_chatter(self, to: str, route: Route = Route.DIRECT) -> None:
        """One key of can-be-ignored traffic past the threshold in one window: the breaker
        must not count it (it may be shed past the watermark, never dropped as a storm)."""
        self.bulk_steps["chatter"] += 1
        spec = MessageSpec("Heartbeat", MessageClass.IGNORABLE, "path/chatter")
        for _ in range(self.past_threshold(to)):
            self.post("chatterer", to, spec, route=route)

    def do_tied_call(self, sender: str, to: str, wait: str, hop_ms: int, route: Route,
                     hops: int = 0) -> None:
        """A call to `to` slowed by its caller's wait (`wait`: the response or the subscribe
        timeout) less `hop_ms` and `hops` of the mesh's own hops (a request and its answer
        are two), so it is taken up in the instant the wait ends: its answer and the timeout
        fall due together, a timer tie the `ties` script then orders. Any slowdown and call
        may make one; drawn apart, they rarely meet."""
        params = self.base_params
        wait_ms = params.subscribe_timeout_ms if wait == "subscribe" else params.response_timeout_ms
        travel = hop_ms + (hops * self.hop_ms() if hops else 0)
        self.do_slow(to, max(wait_ms - travel, 1))
        if wait == "subscribe":
            self.do_subscribe(sender, to)
        else:
            self.post(sender, to, MessageSpec("Request"), route=route)

    def do_subscribe(self, subscriber: str, to: str) -> None:
        retries = self.base_params.subscribe_retries
        sid = self.mesh.subscribe(subscriber, to, retries=retries)
        self.judge.tell(Subscribed(sid, subscriber, to, retries, self.mesh.now_ms(),
                                   self.judge.fed))

    def do_reject(self, to: str, count: int) -> None:
        self.inject(Fault(FaultKind.REJECT_NEXT, to, count=count))

    def do_timeout(self, to: str, count: int) -> None:
        self.inject(Fault(FaultKind.TIMEOUT_NEXT, to, count=count))

    def do_aggregate(self, to: str, count: int, timeout_first: bool) -> None:
        self.inject(Fault(FaultKind.AGGREGATE_NEXT, to, count=count,
                          timeout_first=timeout_first))

    def do_block(self, to: str, duration_ms: int) -> None:
        self.inject(Fault(FaultKind.BLOCK_HUB, to, duration_ms=duration_ms))

    def do_slow(self, to: str, duration_ms: int) -> None:
        self.inject(Fault(FaultKind.SLOW_DESTINATION, to, duration_ms=duration_ms))

    def do_remove(self, to: str) -> None:
        self.inject(Fault(FaultKind.REMOVE_TARGET, to))

    # The network's faults (an adapter declaring NETWORK), at the node hosting `to`.

    def do_partition(self, to: str, duration_ms: int, one_way: bool) -> None:
        kind = FaultKind.ISOLATE_OUTBOUND if one_way else FaultKind.PARTITION_NODE
        self.inject(Fault(kind, to, duration_ms=duration_ms))

    def do_hold_links(self, to: str, duration_ms: int) -> None:
        self.inject(Fault(FaultKind.HOLD_LINKS, to, duration_ms=duration_ms))

    def do_crash(self, to: str, duration_ms: int) -> None:
        self.inject(Fault(FaultKind.CRASH_NODE, to, duration_ms=duration_ms))

    def do_stop(
        self,
        graceful: bool,
        racing: Sequence[tuple[str, Route]] = (),
        slow_ms: int = 0,
        give_up_ms: int | None = None,
    ) -> None:
        """Stop the silo; `racing` posts are sent in the same instant, so their legs (and
        the NACKs they cause) are in flight while the stop runs, and for `slow_ms` more
        when their targets are slowed by that much first (a hold that lasts, or outlives
        the stop budget). With `give_up_ms` (None: never), a graceful stop is given up on
        that much later: the host's shutdown timeout expires, a non-graceful stop request
        that ends any hold. At 0 ms it comes in the stop's own instant, before the mesh
        has run its first stage; later, mid-hold or once the stop is over."""
        if slow_ms:
            for to in dict.fromkeys(to for to, _route in racing):
                self.do_slow(to, slow_ms)
        for to, route in racing:
            self.post("client", to, MessageSpec("Request"), route=route)
        self.stopped = True
        self.judge.tell_in_place(self.mesh, StopAsked(graceful, self.mesh.now_ms(), 0))
        self.mesh.stop(graceful=graceful)
        if graceful and give_up_ms is not None:
            if give_up_ms:
                self.advance_clock(give_up_ms)
            self.judge.tell_in_place(self.mesh, StopAsked(False, self.mesh.now_ms(), 0))
            self.mesh.stop(graceful=False)
