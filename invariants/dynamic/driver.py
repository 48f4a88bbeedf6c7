"""The driver: a Hypothesis state machine that drives any mesh through the adapter protocol.

`MeshMachine` holds the rule bodies (`do_<family>`): it creates hubs with drawn
watermarks, posts user and can-be-ignored traffic, floods with many distinct keys, posts
without identity, subscribes to missing and present targets, injects rejections and
timeouts into grain calls, blocks turns, slows destinations, removes targets, advances
virtual time and stops the silo gracefully or not. Which of them a check's machine has is
the plan's business (`invariants.dynamic.plans`).

- Every scheduling choice comes from Hypothesis: each `advance` step draws a short
  schedule the mesh's `Chooser` reads (`ScriptedChooser`), and every fault is a drawn rule.
- Safety after every step (the checker's monitor is fed only the new events), deadlines
  against virtual time, liveness at teardown: run to quiescence within a bound, then
  every subscription terminated, queues drained, the stop completed, answers owed given.
- What the machine itself does (each post, fault and stop) is told to every monitor as a
  harness fact, in its place among the trace events: the ground truth the checks set
  beside the mesh's own account.
- What a run saw across its examples goes to the `RunStats` of the run that is recording
  (`recording`), a value the runner owns; nothing is kept on the machine class. That
  includes each monitor's evidence: how often each obligation was exercised.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import ClassVar

from hypothesis import event, note, target
from hypothesis.control import currently_in_test_context
from hypothesis.stateful import RuleBasedStateMachine, invariant

from invariants.adapter import (
    AdapterFactory,
    ClockError,
    Fault,
    FaultKind,
    MeshAdapter,
    MessageSpec,
    RoundTrippingAdapter,
    Route,
    calling_adapter,
    capabilities_of,
    factory_name,
)
from invariants.checks import (
    CheckParams,
    HarnessFact,
    Injected,
    Monitor,
    Posted,
    RoundTripSet,
    StopAsked,
    Subscribed,
    Violation,
    monitor_for,
)
from invariants.dynamic.chooser import ScriptedChooser
from invariants.dynamic.report import (
    InvariantViolated,
    failure_diagram,
    failure_note,
    schedule_note,
    schedule_of,
    write_diagram,
)
from invariants.dynamic.rule_swarm import keep_on
from invariants.dynamic.seed_programs import SEED_PROGRAMS, Program
from invariants.step_budget import within_budget
from invariants.trace import EventKind, MessageClass, TraceEvent

HUBS = ("h0", "h1", "h2")
MISSING = ("h0/gone", "ghost")  # under a live prefix, and nowhere at all
SENDERS = ("client", "peer")
# The senders with a hub of their own: an answer to "peer" lands at its sender and must be
# accepted there; one to "client" finds no hub (a sender that has gone).
SENDER_HUBS = ("peer",)
WATERMARKS = (4, 25, None)  # None: the mesh's default
LIVENESS_LIMIT_MS = 10 * 60 * 1000  # teardown runs to quiescence within this bound
# Steps of each bulk family per run (thousands of posts each): one fan-out and one storm
# may share a run, so every run of INV6 meets both of its shapes.
MAX_BULK_STEPS = 1
BULK_FAMILIES = frozenset({"fanout", "storm", "chatter"})

HEARTBEAT = MessageSpec("Heartbeat", MessageClass.IGNORABLE)


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


EVIDENCE_PREFIX = "evidence "


def evidence_label(check_id: str, obligation: str) -> str:
    """The `event()` label an example's evidence for one obligation is reported under."""
    return f"{EVIDENCE_PREFIX}{check_id}: {obligation}"


@dataclass
class RunStats:
    """What one run of a machine class saw across its examples."""

    examples: int = 0
    first_failure_example: int | None = None
    failing_steps: int | None = None  # steps of the latest failing run: the shrunk one
    violations: tuple[Violation, ...] = ()
    diagram: str | None = None
    # The failing run's ready order, from an adapter whose loop records one (`schedule_text`)
    schedule: str | None = None
    behaviours: dict[str, int] = field(default_factory=dict)
    # check id -> obligation -> cases exercised, summed over the examples
    evidence: dict[str, Counter[str]] = field(default_factory=dict)
    context: dict[str, Counter[str]] = field(default_factory=dict)  # sightings behind causes


# The stats of the run in progress: set by whoever runs a machine (`recording`); a machine
# made outside a recording (a HypoFuzz worker, a pasted step program) keeps its own.
_RECORDING: ContextVar[RunStats | None] = ContextVar("harness_run_stats", default=None)


@contextmanager
def recording() -> Iterator[RunStats]:
    """Every machine made inside the block reports to the `RunStats` it yields."""
    stats = RunStats()
    token = _RECORDING.set(stats)
    try:
        yield stats
    finally:
        _RECORDING.reset(token)


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
        self.monitors: list[Monitor] = []
        self.enabled: frozenset[str] = frozenset()
        self.fed = 0
        self.steps = 0
        self.stopped = False
        self.failed = False  # a violation or an error was raised: teardown only cleans up
        self.flood_keys = 0
        self.bulk_steps: Counter[str] = Counter()  # per bulk family
        self.max_depth = 0
        self.max_in_flight = 0
        self._depth: dict[str, int] = {}
        self._in_flight = 0
        self._seen: set[str] = set()
        self.stats = _RECORDING.get() or RunStats()
        self.stats.examples += 1

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
        roundtrip: bool = False,
    ) -> None:
        """A fresh mesh with the drawn watermarks, families and (where the adapter declares
        it) envelope round trip, which stays on for the whole run."""
        self.enabled = self.core_families | {name for name, on in swarm.items() if on}
        adapter = self.adapter = type(self).adapter_factory(self.chooser)
        configured = {}
        for hub, watermark in zip(HUBS, watermarks, strict=True):
            adapter.create_hub(hub, watermark=watermark)
            if watermark is not None:
                configured[hub] = watermark
        for hub in SENDER_HUBS:
            adapter.create_hub(hub)
        params = replace(
            self.base_params, watermarks={**self.base_params.watermarks, **configured}
        )
        capabilities = capabilities_of(adapter)
        self.monitors = [monitor_for(check_id, params, capabilities)
                         for check_id in self.check_ids]
        if roundtrip:
            if not isinstance(adapter, RoundTrippingAdapter):
                raise TypeError(f"{type(adapter).__name__} declares the envelope_roundtrip "
                                "capability but has no set_envelope_roundtrip(on) method")
            adapter.set_envelope_roundtrip(True)
            self._tell(RoundTripSet(True, adapter.now_ms(), self.fed))

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
        # Told after the post returns: the fact precedes the events not yet fed, its own
        # among them (`seq` is a lower bound, exact enough for facts looked up by id).
        self._tell(Posted(delivery_id, sender, target, spec.type_name, spec.message_class,
                          spec.diagnostic_key, identity, route, mesh.now_ms(), self.fed))
        return delivery_id

    def inject(self, fault: Fault) -> None:
        self._tell_in_place(
            Injected(fault.kind, fault.target, fault.count, fault.duration_ms,
                     self.mesh.now_ms(), 0, fault.timeout_first)
        )
        self.mesh.inject(fault)

    def _clock_text(self) -> str:
        return f"{self.adapter.now_ms()} ms" if self.adapter is not None else "the start"

    def _tell_in_place(self, fact: Injected | StopAsked) -> None:
        """A fault or stop, told after every event so far and before any it causes."""
        self._feed()
        self._tell(replace(fact, seq=self.fed))

    def _tell(self, fact: HarnessFact) -> None:
        for monitor in self.monitors:
            monitor.tell(fact)

    def step(self) -> None:
        self.steps += 1

    def acting(self, body: Callable[[], None], what: str = "a step") -> None:
        """Run one step's body within the step budget; if the mesh or adapter raises (or
        hangs), or the run is interrupted, the run is over: teardown must not judge a
        half-done step (its liveness verdict would hide the exception or the interrupt)."""
        try:
            with self.calling(f"in {what}"), within_budget(f"{what} at {self._clock_text()}"):
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
        stats.schedule = schedule_of(self.mesh)
        if currently_in_test_context():
            note(failure_note(diagram, path))
            if stats.schedule is not None:
                note(schedule_note(stats.schedule))
        raise InvariantViolated(self.check_ids, violations)

    @invariant()
    def safety(self) -> None:
        if self.adapter is None:
            return
        self.acting(self._feed, "trace() after a step")
        with self.calling("after a step"):
            self._verify(final=False)

    def _harvest(self) -> None:
        """Add this example's evidence to the run's; inside a Hypothesis test also as
        `event()` features, which a fuzzing session reads from its observations."""
        in_test = currently_in_test_context()
        for monitor in self.monitors:
            total = self.stats.evidence.setdefault(monitor.check_id, Counter())
            total.update(monitor.evidence)
            self.stats.context.setdefault(monitor.check_id, Counter()).update(monitor.context)
            if in_test:
                for name, count in monitor.evidence.items():
                    if count:
                        event(evidence_label(monitor.check_id, name), payload=count)

    def teardown(self) -> None:
        # Teardown runs in the `finally` of every run (Hypothesis', `run_program`'s): with
        # an interrupt on its way up (a signal outside a step), there is nothing to judge,
        # and a verdict raised here would take the interrupt's place.
        interrupted = isinstance(sys.exc_info()[1], KeyboardInterrupt)
        if self.adapter is None or self.failed or interrupted:
            return
        with self.calling("at teardown"):
            self._settle()

    def _settle(self) -> None:
        """Teardown's judgement: run to quiescence within the bound, then the final checks."""
        before = self.mesh.now_ms()
        with within_budget(f"run_until_idle({LIVENESS_LIMIT_MS}) at teardown, {before} ms"):
            quiescent = self.mesh.run_until_idle(LIVENESS_LIMIT_MS)
        now = self.mesh.now_ms()
        if not before <= now <= before + LIVENESS_LIMIT_MS:
            raise ClockError(f"{type(self.mesh).__name__}.run_until_idle("
                             f"{LIVENESS_LIMIT_MS}) moved virtual time from {before} ms to "
                             f"{now} ms, outside [{before}, {before + LIVENESS_LIMIT_MS}]")
        with within_budget(f"trace() at teardown, {now} ms"):
            self._feed()
        self._harvest()
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
        # Lifecycle traffic is can-be-ignored too, and must never be shed: one behind the flood.
        self.post("prober", to, MessageSpec("ShutdownRequest", MessageClass.LIFECYCLE),
                  route=route)

    @property
    def past_threshold(self) -> int:
        """One post more than the breaker admits per key per window: a wrong key trips."""
        return self.base_params.breaker_threshold + 1

    def do_fanout(self, to: str, extra: int, route: Route = Route.DIRECT) -> None:
        """One sender, target and type about many payload identities, in one window."""
        self.bulk_steps["fanout"] += 1
        for i in range(self.past_threshold + extra):
            spec = MessageSpec("CreateOrUpdateNode", MessageClass.USER, f"node/{i}")
            self.post("importer", to, spec, route=route)

    def do_storm(self, to: str, route: Route = Route.DIRECT) -> None:
        """One key, one sender, one target, ramping up to a storm: half the threshold and
        one in one window; once the window and cooldown have passed, as many again (past
        the threshold in all, never within one window: none may be dropped), then on in
        that window until the key trips (its drops are legitimate); then one post 1 ms
        before the cooldown ends (still dropped) and one as it ends (admitted again)."""
        self.bulk_steps["storm"] += 1
        spec = MessageSpec("UpdateStream", MessageClass.USER, "stream/1")
        params = self.base_params
        for _ in range(params.breaker_threshold // 2 + 1):
            self.post("owner", to, spec, route=route)
        self.mesh.advance(params.breaker_window_ms + params.breaker_cooldown_ms + 1)
        for _ in range(self.past_threshold):
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
        for _ in range(self.past_threshold):
            self.post("chatterer", to, spec, route=route)

    def do_subscribe(self, subscriber: str, to: str) -> None:
        retries = self.base_params.subscribe_retries
        sid = self.mesh.subscribe(subscriber, to, retries=retries)
        self._tell(Subscribed(sid, subscriber, to, retries, self.mesh.now_ms(), self.fed))

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

    def do_stop(
        self,
        graceful: bool,
        racing: Sequence[tuple[str, Route]] = (),
        slow_ms: int = 0,
        give_up_ms: int = 0,
    ) -> None:
        """Stop the silo; `racing` posts are sent in the same instant, so their legs (and
        the NACKs they cause) are in flight while the stop runs, and for `slow_ms` more
        when their targets are slowed by that much first (a hold that lasts, or outlives
        the stop budget). With `give_up_ms`, a graceful stop is given up on that much
        later: the host's shutdown timeout expires mid-hold, a non-graceful stop request
        that ends any hold."""
        if slow_ms:
            for to in dict.fromkeys(to for to, _route in racing):
                self.do_slow(to, slow_ms)
        for to, route in racing:
            self.post("client", to, MessageSpec("Request"), route=route)
        self.stopped = True
        self._tell_in_place(StopAsked(graceful, self.mesh.now_ms(), 0))
        self.mesh.stop(graceful=graceful)
        if graceful and give_up_ms:
            self.advance_clock(give_up_ms)
            self._tell_in_place(StopAsked(False, self.mesh.now_ms(), 0))
            self.mesh.stop(graceful=False)

    def do_advance(self, ms: int, schedule: list[int], ties: Sequence[int] = ()) -> None:
        self.chooser.load(schedule, ties)
        self.advance_clock(ms)

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
        for family, arguments in with_routes(SEED_PROGRAMS[check_id][program], self.stand_ins):
            if family == "init" or (family == "stop" and self.stopped):
                continue
            if family == "advance":
                self.advance_clock(arguments["ms"])
            else:
                getattr(self, f"do_{family}")(**arguments)

