"""The driver: a Hypothesis state machine that drives any mesh through the adapter protocol.

`MeshMachine` runs a mesh: it starts a fresh one (hubs with drawn watermarks, the sender's
hub), runs each step's body within the step budget, and at teardown runs the mesh to
quiescence within a bound. Its primitives (`post`, `inject`, `subscribe_to`, `stop_silo`,
`advance_clock`) are how anything acts on the mesh: each tells its `Judge`
(`invariants.dynamic.judge`) what the harness did, as a harness fact in its place among
the events. The judge holds the monitors: fed the new events after every step, asked for
violations after every step and at the end. What each family of drawn steps does, and the
seed scenarios replayed, are the `Workload`'s (`invariants.dynamic.workload`); which
families a check's machine has, as rules, is the plan's (`invariants.dynamic.plans`).

Every scheduling choice comes from Hypothesis: each `advance` step draws a short schedule
the mesh's `Chooser` reads (`ScriptedChooser`), and every fault is a drawn rule.
"""

from __future__ import annotations

import sys
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
from invariants.dynamic.seed_programs import Step
from invariants.dynamic.workload import Workload
from invariants.step_budget import step_budgets, within_budget

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
        self.workload = Workload(self)  # the families' bodies, acting through this machine

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

    def subscribe_to(self, subscriber: str, to: str, retries: int) -> None:
        sid = self.mesh.subscribe(subscriber, to, retries=retries)
        self.judge.tell(Subscribed(sid, subscriber, to, retries, self.mesh.now_ms(),
                                   self.judge.fed))

    def stop_silo(self, *, graceful: bool) -> None:
        """Stop the silo, told to the judge in its place (after every event so far)."""
        self.stopped = True
        self.judge.tell_in_place(self.mesh, StopAsked(graceful, self.mesh.now_ms(), 0))
        self.mesh.stop(graceful=graceful)

    def advance_clock(self, ms: int) -> None:
        """`advance(ms)`, and the virtual clock checked: the harness knows where it must be."""
        mesh = self.mesh
        before = mesh.now_ms()
        mesh.advance(ms)
        now = mesh.now_ms()
        if now != before + ms:
            raise ClockError(f"{type(mesh).__name__}.advance({ms}) moved virtual time from "
                             f"{before} ms to {now} ms, not to {before + ms} ms")

    def hubs_sharing_node(self, hub: str) -> frozenset[str]:
        """The run's hubs (its senders' among them) on the node hosting `hub`, as a
        networked adapter places them (`node_of`); only `hub` where it places none."""
        node_of = getattr(self.mesh, "node_of", None)
        if not callable(node_of):
            return frozenset({hub})
        node = node_of(hub)
        return frozenset(h for h in HUBS + SENDER_HUBS if node_of(h) == node) | {hub}

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
