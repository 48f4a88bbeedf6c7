"""The shape every checker shares: a fold over the trace that can be fed incrementally.

A checker is pure: it reads only `TraceEvent`s. It is written as a monitor so a state
machine can feed it the new events after each step (O(new events), not O(trace)) while
`check(trace)` stays a plain function over a whole trace.

Three kinds of obligation:
- safety: broken by an event as it is observed (recorded at once);
- deadlines: broken when virtual time passes a bound with something still pending
  (`overdue(now_ms)`), so "within bounded time" is checked while the run goes on: asked
  whenever an event shows virtual time has moved, and latched, so a late answer that
  lands within the same `advance` step as its deadline is still caught;
- liveness: things that must have happened once the mesh is quiescent (`unfinished()`),
  only asked for at the end of a run.

Besides the trace a monitor is told the harness facts (`tell`): what the driver itself
posted, injected and asked for (`invariants.checks.harness_facts`). And it counts, per
obligation its module lists (`obligations`: obligation -> the likely cause when a run
never exercised it), how often the run exercised it (`evidence`): a check that saw no
case of an obligation has not shown it holds.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from invariants.adapter import Capability
from invariants.capabilities import DEFAULT_CAPABILITIES, gates_of
from invariants.checks.facts import DeliveryFacts
from invariants.checks.harness_facts import HarnessFact, HarnessFacts, Posted, interleave
from invariants.checks.params import DEFAULT_PARAMS, CheckParams
from invariants.checks.violation import Violation
from invariants.trace import EventKind, MessageClass, TraceEvent

_CUSTOM = EventKind.CUSTOM


class Monitor(ABC):
    check_id: ClassVar[str]
    title: ClassVar[str]
    # Obligation -> the likely cause when a run never exercised it (the module lists them).
    obligations: ClassVar[Mapping[str, str]] = {}
    # The gates, read from the capability records (`invariants.capabilities.gates_of`) when
    # the class is made, unless it names its own (a team's invariant may):
    # the capabilities the invariant speaks about: on an adapter that declares fewer, its
    # obligations are not applicable (reported as such, never as passed);
    needs: ClassVar[frozenset[Capability]] = frozenset()
    # obligations only an adapter with one more capability can exercise (an optional part
    # of the protocol): on one without it they are not applicable, the rest still count;
    obligation_needs: ClassVar[Mapping[str, Capability]] = {}
    # obligations an adapter with one more capability meets otherwise (an at-least-once
    # mesh re-sends what a timeout left at the callee, by contract): on one that declares
    # it they are not applicable, with the reason.
    obligation_waived_by: ClassVar[Mapping[str, tuple[Capability, str]]] = {}
    # Whether `observe` reads the mesh's own events (`EventKind.CUSTOM`): a team's checker
    # may; the built-in ones read none, and are never fed them (a mesh that notes every
    # turn would otherwise hand each built-in checker a third of its trace for nothing).
    reads_custom_events: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        check_id = cls.__dict__.get("check_id")
        if not isinstance(check_id, str):
            return
        gates = gates_of(check_id)
        for name, derived in (("needs", gates.needs),
                              ("obligation_needs", gates.obligation_needs),
                              ("obligation_waived_by", gates.waived_by)):
            if name not in cls.__dict__:
                setattr(cls, name, derived)

    def __init__(self, params: CheckParams = DEFAULT_PARAMS) -> None:
        self.params = params
        # What the adapter declares (`monitor_for` sets it; a bare trace is read as the
        # protocol's first surface).
        self.capabilities: frozenset[Capability] = DEFAULT_CAPABILITIES
        self.now_ms = 0
        self.facts = DeliveryFacts()
        self.harness = HarnessFacts()
        self.evidence: Counter[str] = Counter(dict.fromkeys(self.obligations, 0))
        self.context: Counter[str] = Counter()  # what `cause` reads besides the evidence
        self._found: list[Violation] = []
        self._latched: list[Violation] = []  # deadlines seen passing while events came in
        self._latched_keys: set[tuple[TraceEvent, ...] | str] = set()

    def declare(self, delivery_id: str, message_class: MessageClass) -> None:
        """A fact from the driver: it posted `delivery_id` with this class."""
        self.facts.declare(delivery_id, message_class)

    def tell(self, fact: HarnessFact) -> None:
        """A harness fact, in its place among the events (before the ones it caused)."""
        self.harness.record(fact)
        if isinstance(fact, Posted):
            self.facts.declare(fact.delivery_id, fact.message_class)
        self.on_fact(fact)

    def on_fact(self, fact: HarnessFact) -> None:  # noqa: B027 - a hook most checks leave
        """A check that judges from a harness fact takes it here."""

    def exercised(self, obligation: str, times: int = 1) -> None:
        """The run gave `obligation` a case to hold on."""
        self.evidence[obligation] += times

    def judged(self, obligation: str, outcome: tuple[bool, str | None],
               event: TraceEvent) -> None:
        """A rule helper's verdict on `event`, (judged, the violation's text or None): a
        violation flagged, else a case of `obligation` where it was judged."""
        judged, wrong = outcome
        if wrong is not None:
            self.flag(wrong, event)
        elif judged:
            self.exercised(obligation)

    def saw(self, what: str) -> None:
        """A sighting `cause` may read to explain a count of 0 (not an obligation)."""
        self.context[what] += 1

    @classmethod
    def inapplicable(cls, capabilities: frozenset[Capability],
                     params: CheckParams | None = None) -> dict[str, str]:
        """Obligation -> why it is not applicable to an adapter with `capabilities` and a
        mesh whose declared policies are `params` (None: only the capabilities)."""
        lacking = {
            name: f"the adapter declares no {need.value.replace('_', ' ')}"
            for name, need in cls.obligation_needs.items()
            if need not in capabilities
        }
        waived = {
            name: f"the adapter declares {capability.value.replace('_', ' ')}: {reason}"
            for name, (capability, reason) in cls.obligation_waived_by.items()
            if capability in capabilities
        }
        declared = cls.by_policy(params) if params is not None else {}
        return {**lacking, **waived, **declared}

    @classmethod
    def by_policy(cls, params: CheckParams) -> dict[str, str]:
        """Obligations a declared policy leaves without a case by design (the mesh chose
        another of the correct designs), each with the policy that says so."""
        return {}

    @classmethod
    def across_examples(cls, evidence: Mapping[str, int], context: Mapping[str, int]
                        ) -> list[str]:
        """Violations only the whole run shows, from its summed counts (one line each):
        what every example passes alone but the examples together contradict."""
        return []

    @classmethod
    def cause(cls, obligation: str, evidence: Mapping[str, int]) -> str:
        """Why `obligation` was likely never exercised, given a run's summed counts."""
        return cls.obligations.get(obligation, "the run never reached it")

    def feed(self, events: Iterable[TraceEvent]) -> None:
        # Bound once: both are called for every event of a flood.
        facts_observe, observe = self.facts.observe, self.observe
        skipped = None if self.reads_custom_events else _CUSTOM
        for event in events:
            if event.kind is skipped:
                continue
            time_ms = event.time_ms
            if time_ms > self.now_ms:
                # Time moved on: a deadline before it is decided now, whatever comes next.
                self._latch(self.overdue(time_ms))
                self.now_ms = time_ms
            facts_observe(event)
            observe(event)

    def _latch(self, found: list[Violation]) -> None:
        for violation in found:
            key = _deadline_key(violation)
            if key not in self._latched_keys:
                self._latched_keys.add(key)
                self._latched.append(violation)

    @abstractmethod
    def observe(self, event: TraceEvent) -> None:
        """Take one event; record any safety violation it shows."""

    def overdue(self, now_ms: int) -> list[Violation]:
        """Obligations whose deadline has passed by `now_ms`."""
        return []

    def unfinished(self) -> list[Violation]:
        """Liveness obligations still open; meaningful only once the mesh is quiescent."""
        return []

    def violations(self, *, now_ms: int | None = None, final: bool = False) -> list[Violation]:
        now = self.now_ms if now_ms is None else max(now_ms, self.now_ms)
        late = [v for v in self.overdue(now) if _deadline_key(v) not in self._latched_keys]
        found = [*self._found, *self._latched, *late]
        if final:
            found.extend(self.unfinished())
        return found

    def flag(self, message: str, *events: TraceEvent) -> None:
        self._found.append(Violation(self.check_id, message, tuple(events)))

    def violation(self, message: str, *events: TraceEvent) -> Violation:
        return Violation(self.check_id, message, tuple(events))


def _deadline_key(violation: Violation) -> tuple[TraceEvent, ...] | str:
    """One deadline, however late it is asked: the events that opened it (a deadline
    with no event, e.g. from a harness fact, by its message, which must then be stable)."""
    return violation.events or violation.message


def run_monitor(
    monitor: Monitor,
    trace: Sequence[TraceEvent],
    *,
    now_ms: int | None = None,
    final: bool = False,
    declared: Mapping[str, MessageClass] | None = None,
    facts: Sequence[HarnessFact] = (),
) -> list[Violation]:
    for delivery_id, message_class in (declared or {}).items():
        monitor.declare(delivery_id, message_class)
    if not facts:
        monitor.feed(trace)
    else:
        for item in interleave(trace, facts):
            if isinstance(item, TraceEvent):
                monitor.feed((item,))
            else:
                monitor.tell(item)
    return monitor.violations(now_ms=now_ms, final=final)


@dataclass(frozen=True)
class Check:
    """A checker's record, the `check` its module ends with (`check = check_function(Cls)`):
    the monitor class, whose `check_id` and `title` it goes by, the one way a monitor of it
    is made (`fresh`), and the checker as a plain function over a whole trace (a fresh
    monitor fed all of it). `invariants.checks.CHECK_MODULES` lists the modules."""

    monitor: type[Monitor]

    @property
    def id(self) -> str:
        return self.monitor.check_id

    @property
    def title(self) -> str:
        return self.monitor.title

    def fresh(
        self, params: CheckParams = DEFAULT_PARAMS,
        capabilities: frozenset[Capability] | None = None,
    ) -> Monitor:
        """A new monitor, told what the adapter declares (by default the protocol's first
        surface)."""
        monitor = self.monitor(params)
        if capabilities is not None:
            monitor.capabilities = capabilities
        return monitor

    def __call__(
        self,
        trace: Sequence[TraceEvent],
        params: CheckParams = DEFAULT_PARAMS,
        *,
        now_ms: int | None = None,
        final: bool = False,
        declared: Mapping[str, MessageClass] | None = None,
        facts: Sequence[HarnessFact] = (),
        capabilities: frozenset[Capability] | None = None,
    ) -> list[Violation]:
        return run_monitor(
            self.fresh(params, capabilities), trace, now_ms=now_ms, final=final,
            declared=declared, facts=facts,
        )


def check_function(monitor_class: type[Monitor]) -> Check:
    """The module-level `check` of one invariant, its record."""
    return Check(monitor_class)
