"""The judge of one example: the checkers' monitors, fed the mesh's trace and told the
harness's facts, and what the example reached, reported to the run that is recording.

`MeshMachine` drives; its `Judge` feeds every monitor only the new events after each step
(`feed`), tells them each post, fault and stop in its place among those events (`tell`,
`tell_in_place`), asks for violations (`verify`, final at teardown) and adds the example's
evidence to the run's `RunStats` (`harvest`), a value the runner owns (`recording`).

In a recording run the judge also watches as a bystander: a monitor of every other check
the adapter's capabilities admit (`bystander_ids`) is fed the same trace and facts. Its
violations never fail the example; the first of each check in the run is recorded with the
program of steps that led to it (`Sighting`), and its evidence is summed with the rest.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from pathlib import Path

from hypothesis import event, note, target
from hypothesis.control import currently_in_test_context

from invariants.adapter import Capability, MeshAdapter
from invariants.checks import (
    CHECKS,
    CheckParams,
    HarnessFact,
    Injected,
    Monitor,
    NetworkHeld,
    StopAsked,
    Violation,
    monitor_for,
)
from invariants.dynamic.report import (
    InvariantViolated,
    failure_diagram,
    failure_note,
    schedule_note,
    schedule_of,
    write_diagram,
)
from invariants.dynamic.seed_programs import Program, Step
from invariants.trace import EventKind, TraceEvent

EVIDENCE_PREFIX = "evidence "


def evidence_label(check_id: str, obligation: str) -> str:
    """The `event()` label an example's evidence for one obligation is reported under."""
    return f"{EVIDENCE_PREFIX}{check_id}: {obligation}"


@dataclass(frozen=True)
class Sighting:
    """A bystander check's first violation in a run: its text, the steps (`init`
    included) that led to it, a program `run_program` replays, and the example of the run
    it came in (from 1)."""

    text: str
    program: Program
    example: int


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
    # Whether its machines judge the other checks as bystanders (`Judge`)
    bystanders: bool = True
    # check id -> the first violation of a check judged as a bystander
    sightings: dict[str, Sighting] = field(default_factory=dict)


# The stats of the run in progress: set by whoever runs a machine (`recording`); a machine
# made outside a recording (a HypoFuzz worker, a pasted step program) keeps its own.
_RECORDING: ContextVar[RunStats | None] = ContextVar("harness_run_stats", default=None)


@contextmanager
def recording(*, bystanders: bool = True) -> Iterator[RunStats]:
    """Every machine made inside the block reports to the `RunStats` it yields, judging
    the other checks as bystanders unless `bystanders` is false."""
    stats = RunStats(bystanders=bystanders)
    token = _RECORDING.set(stats)
    try:
        yield stats
    finally:
        _RECORDING.reset(token)


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
# The kinds `Coverage._label` may name; the rest (most of a flood) are only counted.
_LABELLED = frozenset(_BEHAVIOURS) | {
    EventKind.STOP_REQUESTED, EventKind.ATTEMPT, EventKind.ATTEMPT_FAILED,
}
# Read once per event: module constants, not slow attribute lookups on the enum class.
_ENQUEUED, _HANDLED, _LEG_STARTED, _LEG_ENDED = (
    EventKind.ENQUEUED, EventKind.HANDLED, EventKind.LEG_STARTED, EventKind.LEG_ENDED
)


class Coverage:
    """The behaviours one example reached (each counted once per example) and the queue
    depth and legs in flight it peaked at, which Hypothesis targets."""

    def __init__(self, stats: RunStats, retry_budget: int) -> None:
        self.stats = stats
        self.retry_budget = retry_budget
        self.max_depth = 0
        self.max_in_flight = 0
        self._depth: dict[str, int] = {}
        self._in_flight = 0
        self._seen: set[str] = set()

    def observe(self, events: Sequence[TraceEvent]) -> None:
        depth = self._depth
        for e in events:
            kind = e.kind
            if kind is _ENQUEUED:
                hub = e.hub
                if hub is not None:
                    reached = depth[hub] = depth.get(hub, 0) + 1
                    if reached > self.max_depth:
                        self.max_depth = reached
            elif kind is _HANDLED:
                hub = e.hub
                if hub is not None:
                    depth[hub] = max(0, depth.get(hub, 0) - 1)
            elif kind is _LEG_STARTED:
                self._in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self._in_flight)
            elif kind is _LEG_ENDED:
                self._in_flight -= 1
            elif kind in _LABELLED:
                self._reached(self._label(e))

    def _label(self, e: TraceEvent) -> str | None:
        if e.kind is EventKind.STOP_REQUESTED:
            return "graceful stop" if e.graceful else "non-graceful stop"
        if e.kind is EventKind.ATTEMPT and e.attempt == self.retry_budget:
            return "delivery retry budget spent"
        if e.kind is EventKind.ATTEMPT_FAILED and e.timed_out:
            return "attempt timed out"
        return _BEHAVIOURS.get(e.kind)

    def _reached(self, label: str | None) -> None:
        if label is None or label in self._seen:
            return
        self._seen.add(label)
        self.stats.behaviours[label] = self.stats.behaviours.get(label, 0) + 1
        if currently_in_test_context():
            event(label)

    def report(self, quiescent: bool) -> None:
        """At teardown, inside a Hypothesis test: quiescence as an event, the peaks as
        targets."""
        if currently_in_test_context():
            event("quiescent at teardown" if quiescent else "not quiescent within the bound")
            target(float(self.max_depth), label="max queue depth")
            target(float(self.max_in_flight), label="max legs in flight")


def bystander_ids(check_ids: Sequence[str], capabilities: frozenset[Capability]
                  ) -> tuple[str, ...]:
    """The checks a run of `check_ids` also judges: every other one whose `needs` the
    adapter's capabilities meet."""
    return tuple(c for c, monitor in CHECKS.items()
                 if c not in check_ids and monitor.needs <= capabilities)


def _blame(exc: Exception, monitor: Monitor) -> None:
    """An exception a checker raises (a team's own, say) stays what it is, traceback and
    all, and says whose it is: an error of the checker, never a verdict on the mesh."""
    exc.add_note(f"raised by the checker of {monitor.check_id} "
                 f"({type(monitor).__module__}.{type(monitor).__qualname__})")


def _each(monitors: Sequence[Monitor], method: str, argument: object) -> None:
    """`monitor.<method>(argument)` for each monitor, in order; one handler around the
    loop, not one per monitor (a fact is told to every monitor for every post)."""
    monitor = None
    try:
        for monitor in monitors:
            getattr(monitor, method)(argument)
    except Exception as exc:
        if monitor is not None:
            _blame(exc, monitor)
        raise


def _violations(monitor: Monitor, now: int, final: bool) -> list[Violation]:
    try:
        return monitor.violations(now_ms=now, final=final)
    except Exception as exc:
        _blame(exc, monitor)
        raise


class Judge:
    """The monitors of one example's checks, and what that example reached."""

    def __init__(self, check_ids: tuple[str, ...], base_params: CheckParams,
                 diagram_path: Path | None) -> None:
        self.check_ids = check_ids
        self.diagram_path = diagram_path
        self.monitors: list[Monitor] = []  # the example's own checks': their verdict
        self.bystanders: list[Monitor] = []  # the other checks': recorded, never raised
        self.watching: list[Monitor] = []  # both, fed alike
        self.fed = 0  # trace events fed so far
        self.network_held = False  # told that the network's verdicts held something
        self.failed = False  # a violation was raised
        recording_stats = _RECORDING.get()
        # Only a run that records reads what bystanders see (a HypoFuzz worker does not).
        self.looks_on = recording_stats is not None and recording_stats.bystanders
        self.stats = recording_stats or RunStats()
        self.stats.examples += 1
        self.coverage = Coverage(self.stats, base_params.delivery_retries)

    def watch(self, params: CheckParams, capabilities: frozenset[Capability]) -> None:
        """A monitor per check, and per bystander check where the run records, for a mesh
        with these params and capabilities."""
        self.monitors = [monitor_for(check_id, params, capabilities)
                         for check_id in self.check_ids]
        others = bystander_ids(self.check_ids, capabilities) if self.looks_on else ()
        self.bystanders = [monitor_for(check_id, params, capabilities) for check_id in others]
        self.watching = self.monitors + self.bystanders

    def tell(self, fact: HarnessFact) -> None:
        _each(self.watching, "tell", fact)

    def tell_in_place(self, mesh: MeshAdapter, fact: Injected | StopAsked) -> None:
        """A fault or stop, told after every event so far and before any it causes."""
        self.feed(mesh)
        self.tell(replace(fact, seq=self.fed))

    def feed(self, mesh: MeshAdapter) -> None:
        if not self.network_held:
            held = getattr(mesh, "network_verdicts_held", None)
            if callable(held) and held():
                # Told before the new events: some of them may be what the hold caused.
                self.network_held = True
                self.tell(NetworkHeld(mesh.now_ms(), self.fed))
        trace = mesh.trace()
        fresh = trace[self.fed :]
        if not fresh:
            return
        self.fed = len(trace)
        _each(self.watching, "feed", fresh)
        self.coverage.observe(fresh)

    def verify(self, mesh: MeshAdapter, executed: Sequence[Step], *, final: bool) -> None:
        """Raise `InvariantViolated` on any violation of the example's own checks so far,
        after the steps `executed` (`final`: the run is over); first record each bystander
        check's first violation in the run."""
        now = mesh.now_ms()
        if self.bystanders:
            self._look_on(now, executed, final)
        found = [v for m in self.monitors for v in _violations(m, now, final)]
        if found:
            self._fail(mesh, found, len(executed))

    def _look_on(self, now: int, executed: Sequence[Step], final: bool) -> None:
        sightings = self.stats.sightings
        for monitor in self.bystanders:
            if monitor.check_id in sightings:  # the run's first is recorded: no more asking
                continue
            found = _violations(monitor, now, final)
            if found:
                text = str(InvariantViolated((monitor.check_id,), found))
                sightings[monitor.check_id] = Sighting(text, tuple(executed),
                                                       self.stats.examples)

    def _fail(self, mesh: MeshAdapter, violations: list[Violation], steps: int) -> None:
        self.failed = True
        stats = self.stats
        if stats.first_failure_example is None:
            stats.first_failure_example = stats.examples
        stats.failing_steps = steps
        stats.violations = tuple(violations)
        diagram = failure_diagram(mesh.trace(), violations)
        stats.diagram = diagram
        if self.diagram_path is not None:
            write_diagram(self.diagram_path, diagram)
        stats.schedule = schedule_of(mesh)
        if currently_in_test_context():
            note(failure_note(diagram, self.diagram_path))
            if stats.schedule is not None:
                note(schedule_note(stats.schedule))
        raise InvariantViolated(self.check_ids, violations)

    def harvest(self) -> None:
        """Add this example's evidence (the bystanders' too) to the run's; inside a
        Hypothesis test the own checks' also as `event()` features, which a fuzzing session
        reads from its observations."""
        stats = self.stats
        for monitor in self.watching:
            stats.evidence.setdefault(monitor.check_id, Counter()).update(monitor.evidence)
            stats.context.setdefault(monitor.check_id, Counter()).update(monitor.context)
        if not currently_in_test_context():
            return
        for monitor in self.monitors:
            for name, count in monitor.evidence.items():
                if count:
                    event(evidence_label(monitor.check_id, name), payload=count)
