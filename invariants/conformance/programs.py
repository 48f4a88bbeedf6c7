"""Short fixed programs that exercise an adapter, one per capability, and what each proves.

`conformance(factory, params)` drives a fresh mesh through each program the adapter's
declared capabilities call for, records what the harness did (every post and the id it
got back, every subscription, every question the mesh asked its `Chooser`), runs to
quiescence and returns the broken conventions of each program. A declared capability whose
program shows none of its events is itself a broken convention: a declaration the mesh does
not keep would make its obligations look checked. So is a mesh that never asks its Chooser
where same-instant choices exist, or ignores the answer: its schedule cannot be explored.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from invariants.adapter import (
    AdapterFactory,
    Capability,
    Fault,
    FaultKind,
    FirstChooser,
    MeshAdapter,
    MessageSpec,
    RoundTrippingAdapter,
    Route,
    calling_adapter,
    capabilities_of,
    factory_name,
)
from invariants.checks import CheckParams
from invariants.conformance.conventions import Broken, Post, broken_conventions
from invariants.trace import EventKind, MessageClass, TraceEvent

HUBS = ("alpha", "beta")
MISSING = "nowhere"
QUIET_WITHIN_MS = 10 * 60 * 1000


class AskedChooser:
    """Answers the first option (or the last), counting the questions that had a choice."""

    def __init__(self, *, last: bool = False) -> None:
        self.last = last
        self.questions = 0

    def choose(self, options: int, why: str) -> int:
        if options < 2:
            return 0
        self.questions += 1
        return options - 1 if self.last else 0


@dataclass
class Exercise:
    """One program exercising an adapter: the adapter, and what the harness did to it."""

    adapter: MeshAdapter
    chooser: AskedChooser = field(default_factory=AskedChooser)
    factory: AdapterFactory | None = None  # for a program that runs the mesh once more
    posts: list[Post] = field(default_factory=list)
    subscriptions: list[str] = field(default_factory=list)

    def post(self, sender: str, target: str, spec: MessageSpec, route: Route) -> str:
        did = self.adapter.post(sender, target, spec, route=route)
        self.posts.append(Post(did, sender, target, spec, route, target in HUBS))
        return did


@dataclass(frozen=True)
class Program:
    name: str
    needs: Capability | None  # None: every adapter runs it
    steps: Callable[[Exercise], None]
    proves: Callable[[Sequence[TraceEvent], Exercise, CheckParams], Iterable[Broken]]


def _intake_steps(run: Exercise) -> None:
    run.post("client", "alpha", MessageSpec("Request"), Route.MONOLITH)
    run.post("client", "beta", MessageSpec("Update", MessageClass.USER, "node/1"), Route.DIRECT)
    run.post("client", "alpha", MessageSpec("Heartbeat", MessageClass.IGNORABLE), Route.DIRECT)
    run.post("client", MISSING, MessageSpec("Request"), Route.MONOLITH)


def _intake_proves(trace: Sequence[TraceEvent], run: Exercise, params: CheckParams) -> list[Broken]:
    if not any(e.kind is EventKind.POSTED for e in trace):
        return [Broken("intake", None, "POSTED", "four posts and not one POSTED event")]
    return []


def _grain_steps(run: Exercise) -> None:
    run.adapter.inject(Fault(FaultKind.REJECT_NEXT, "beta", count=1))
    run.post("client", "beta", MessageSpec("Request"), Route.GRAIN)
    run.adapter.run_until_idle(QUIET_WITHIN_MS)
    run.adapter.inject(Fault(FaultKind.TIMEOUT_NEXT, "beta", count=1))
    run.post("client", "beta", MessageSpec("Request"), Route.GRAIN)


def _grain_proves(trace: Sequence[TraceEvent], run: Exercise, params: CheckParams) -> list[Broken]:
    rejected, timed_out = (post.delivery_id for post in run.posts)
    failures = {
        did: [e for e in trace if e.kind is EventKind.ATTEMPT_FAILED and e.delivery_id == did]
        for did in (rejected, timed_out)
    }
    found: list[Broken] = []
    if not any(e.kind is EventKind.ATTEMPT for e in trace):
        found.append(Broken("capabilities", None, "ATTEMPT",
                            "the adapter declares a grain router, but grain posts made no "
                            "ATTEMPT"))
        return found
    first = failures[rejected][0] if failures[rejected] else None
    if first is None:
        found.append(Broken("grain-calls", None, "ATTEMPT_FAILED",
                            f"the rejection injected at beta failed no attempt of {rejected}"))
    elif first.error not in params.resendable_errors or first.timed_out:
        found.append(Broken("grain-calls", first.seq, "ATTEMPT_FAILED",
                            f"the injected rejection failed {rejected} with error "
                            f"{first.error!r} (timed_out={first.timed_out}), which is not a "
                            "resendable error: name it in resendable_errors of "
                            "[tool.harness.params]"))
    if not any(e.timed_out for e in failures[timed_out]):
        found.append(Broken("grain-calls", None, "ATTEMPT_FAILED",
                            f"the timeout injected at beta did not fail {timed_out} with "
                            "timed_out=true"))
    if Capability.AT_LEAST_ONCE in capabilities_of(run.adapter):
        found.extend(_applied_proves(trace, (rejected, timed_out)))
    return found


def _applied_proves(trace: Sequence[TraceEvent], calls: Sequence[str]) -> list[Broken]:
    """An at-least-once adapter reports where its callee applied each grain call."""
    applied = {e.delivery_id for e in trace if e.kind is EventKind.EFFECT_APPLIED}
    missing = [did for did in calls if did not in applied]
    if not missing:
        return []
    return [Broken("capabilities", None, "EFFECT_APPLIED",
                   f"the adapter declares at least once, but the callee never reported "
                   f"applying {', '.join(missing)}: without EFFECT_APPLIED no re-send can "
                   "be shown applied at most once")]


def _aggregate_steps(run: Exercise) -> None:
    for timeout_first in (True, False):
        run.adapter.inject(Fault(FaultKind.AGGREGATE_NEXT, "beta", timeout_first=timeout_first))
        run.post("client", "beta", MessageSpec("Request"), Route.GRAIN)
        run.adapter.run_until_idle(QUIET_WITHIN_MS)


def _aggregate_proves(
    trace: Sequence[TraceEvent], run: Exercise, params: CheckParams
) -> list[Broken]:
    found: list[Broken] = []
    for post, order in zip(run.posts, ("the timeout first", "the rejection first"), strict=True):
        failed = [e for e in trace
                  if e.kind is EventKind.ATTEMPT_FAILED and e.delivery_id == post.delivery_id]
        if not failed:
            found.append(Broken("capabilities", None, "ATTEMPT_FAILED",
                                f"the adapter declares aggregate faults, but the aggregate "
                                f"({order}) injected at beta failed no attempt of "
                                f"{post.delivery_id}"))
        elif not failed[0].timed_out:
            found.append(Broken("grain-calls", failed[0].seq, "ATTEMPT_FAILED",
                                f"the aggregate ({order}) injected at beta failed "
                                f"{post.delivery_id} with timed_out=false: a timeout anywhere "
                                "in an aggregate is a timeout"))
    return found


def _roundtrip_steps(run: Exercise) -> None:
    if isinstance(run.adapter, RoundTrippingAdapter):
        run.adapter.set_envelope_roundtrip(True)
    run.post("client", "alpha", MessageSpec("Request"), Route.MONOLITH)


def _roundtrip_proves(
    trace: Sequence[TraceEvent], run: Exercise, params: CheckParams
) -> list[Broken]:
    if not isinstance(run.adapter, RoundTrippingAdapter):
        return [Broken("capabilities", None, "-", "the adapter declares envelope_roundtrip, "
                       "but has no set_envelope_roundtrip(on) method")]
    (post,) = run.posts
    if not any(e.kind is EventKind.POSTED and e.delivery_id == post.delivery_id
               and e.hub == "alpha" for e in trace):
        return [Broken("intake", None, "POSTED", f"with the envelope round trip on, "
                       f"{post.delivery_id} posted through the router never reached alpha")]
    return []


def _subscribe_steps(run: Exercise) -> None:
    for target in ("alpha", MISSING):
        run.subscriptions.append(run.adapter.subscribe("client", target, retries=2))


def _subscribe_proves(
    trace: Sequence[TraceEvent], run: Exercise, params: CheckParams
) -> list[Broken]:
    if not any(e.kind is EventKind.SUBSCRIBE_ATTEMPT for e in trace):
        return [Broken("capabilities", None, "SUBSCRIBE_ATTEMPT",
                       "the adapter declares subscribe, but two subscriptions sent nothing")]
    return []


def _stop_steps(run: Exercise) -> None:
    run.post("client", "alpha", MessageSpec("Request"), Route.MONOLITH)  # in flight at stop
    run.adapter.stop(graceful=True)


def _stop_proves(trace: Sequence[TraceEvent], run: Exercise, params: CheckParams) -> list[Broken]:
    kinds = {e.kind for e in trace}
    missing = [k for k in (EventKind.STOP_REQUESTED, EventKind.STOP_STAGE_ENTERED,
                           EventKind.STOP_COMPLETED) if k not in kinds]
    return [Broken("stop", None, kind.name,
                   f"a graceful stop, run to quiescence, emitted no {kind.name}")
            for kind in missing]


def _schedule_steps(run: Exercise) -> None:
    # Three deliveries posted in one instant to two hubs: their hops are due together.
    run.post("client", "alpha", MessageSpec("Request"), Route.MONOLITH)
    run.post("peer", "beta", MessageSpec("Request"), Route.MONOLITH)
    run.post("other", "alpha", MessageSpec("Request"), Route.MONOLITH)


def _order_of(trace: Sequence[TraceEvent]) -> list[tuple[str, str | None, str | None]]:
    """What happened where, in order, without seq and ids' numbering: the schedule."""
    return [(e.kind.name, e.hub, e.sender) for e in trace]


def _schedule_proves(
    trace: Sequence[TraceEvent], run: Exercise, params: CheckParams
) -> list[Broken]:
    if run.chooser.questions == 0:
        return [Broken("chooser", None, "Chooser.choose",
                       "three deliveries posted in one instant to two hubs, and the mesh "
                       "never asked its Chooser which runs first: its schedule cannot be "
                       "explored, so its same-instant races are never tried")]
    assert run.factory is not None
    last = AskedChooser(last=True)
    again = Exercise(run.factory(last), last)
    for hub in HUBS:
        again.adapter.create_hub(hub)
    _schedule_steps(again)
    again.adapter.run_until_idle(QUIET_WITHIN_MS)
    if _order_of(again.adapter.trace()) == _order_of(trace):
        return [Broken("chooser", None, "Chooser.choose",
                       f"the mesh asked its Chooser {run.chooser.questions} time(s), but "
                       "answering the last option every time gave the same trace as the "
                       "first: the mesh does not follow the answer, so its schedule cannot "
                       "be explored")]
    return []


PROGRAMS: tuple[Program, ...] = (
    Program("intake", None, _intake_steps, _intake_proves),
    Program("schedule", None, _schedule_steps, _schedule_proves),
    Program("grain", Capability.GRAIN_ROUTER, _grain_steps, _grain_proves),
    Program("subscribe", Capability.SUBSCRIBE, _subscribe_steps, _subscribe_proves),
    Program("stop", Capability.STOP_LIFECYCLE, _stop_steps, _stop_proves),
    Program("aggregate", Capability.AGGREGATE_FAULTS, _aggregate_steps, _aggregate_proves),
    Program("roundtrip", Capability.ENVELOPE_ROUNDTRIP, _roundtrip_steps, _roundtrip_proves),
)


@dataclass(frozen=True)
class ProgramResult:
    program: str
    broken: tuple[Broken, ...]
    events: int
    trace: tuple[TraceEvent, ...] = field(default=(), compare=False, repr=False)


def drive(program: Program, factory: AdapterFactory) -> tuple[Exercise, bool, list[TraceEvent]]:
    """A fresh mesh through `program`'s steps, run to quiescence: what the harness did,
    whether it went quiet, and its trace."""
    chooser = AskedChooser()
    run = Exercise(factory(chooser), chooser, factory)
    for hub in HUBS:
        run.adapter.create_hub(hub)
    program.steps(run)
    quiet = run.adapter.run_until_idle(QUIET_WITHIN_MS)
    return run, quiet, list(run.adapter.trace())


def exercise(program: Program, factory: AdapterFactory, params: CheckParams) -> ProgramResult:
    with calling_adapter(factory_name(factory), f"in conformance program {program.name!r}"):
        run, quiet, trace = drive(program, factory)
        broken = [*broken_conventions(trace, run.posts, run.subscriptions),
                  *program.proves(trace, run, params)]  # some proofs drive the adapter
    if not quiet:
        broken.append(Broken("quiescence", None, "run_until_idle",
                             f"not quiet within {QUIET_WITHIN_MS} ms of virtual time"))
    return ProgramResult(program.name, tuple(broken), len(trace), tuple(trace))


def conformance(factory: AdapterFactory, params: CheckParams | None = None
                ) -> tuple[frozenset[Capability], list[ProgramResult]]:
    """The capabilities the adapter declares and each applicable program's result."""
    params = params or CheckParams()
    with calling_adapter(factory_name(factory), "from its factory"):
        declared = capabilities_of(factory(FirstChooser()))
    results = [exercise(p, factory, params) for p in PROGRAMS
               if p.needs is None or p.needs in declared]
    return declared, results
