"""The shape every checker shares: a fold over the trace that can be fed incrementally.

A checker is pure: it reads only `TraceEvent`s. It is written as a monitor so a state
machine can feed it the new events after each step (O(new events), not O(trace)) while
`check(trace)` stays a plain function over a whole trace.

Three kinds of obligation:
- safety: broken by an event as it is observed (recorded at once);
- deadlines: broken when virtual time passes a bound with something still pending
  (`overdue(now_ms)`), so "within bounded time" is checked while the run goes on;
- liveness: things that must have happened once the mesh is quiescent (`unfinished()`),
  only asked for at the end of a run.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from typing import ClassVar, Protocol

from invariants.checks.facts import DeliveryFacts
from invariants.checks.params import DEFAULT_PARAMS, CheckParams
from invariants.checks.violation import Violation
from invariants.trace import MessageClass, TraceEvent


class Monitor(ABC):
    check_id: ClassVar[str]
    title: ClassVar[str]

    def __init__(self, params: CheckParams = DEFAULT_PARAMS) -> None:
        self.params = params
        self.now_ms = 0
        self.facts = DeliveryFacts()
        self._found: list[Violation] = []

    def declare(self, delivery_id: str, message_class: MessageClass) -> None:
        """A fact from the driver: it posted `delivery_id` with this class."""
        self.facts.declare(delivery_id, message_class)

    def feed(self, events: Iterable[TraceEvent]) -> None:
        facts = self.facts
        for event in events:
            self.now_ms = max(self.now_ms, event.time_ms)
            facts.observe(event)
            self.observe(event)

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
        found = [*self._found, *self.overdue(now)]
        if final:
            found.extend(self.unfinished())
        return found

    def flag(self, message: str, *events: TraceEvent) -> None:
        self._found.append(Violation(self.check_id, message, tuple(events)))

    def violation(self, message: str, *events: TraceEvent) -> Violation:
        return Violation(self.check_id, message, tuple(events))


def run_monitor(
    monitor: Monitor,
    trace: Sequence[TraceEvent],
    *,
    now_ms: int | None = None,
    final: bool = False,
    declared: Mapping[str, MessageClass] | None = None,
) -> list[Violation]:
    for delivery_id, message_class in (declared or {}).items():
        monitor.declare(delivery_id, message_class)
    monitor.feed(trace)
    return monitor.violations(now_ms=now_ms, final=final)


class CheckFunction(Protocol):
    """A checker as a plain function over a whole trace."""

    def __call__(
        self,
        trace: Sequence[TraceEvent],
        params: CheckParams = DEFAULT_PARAMS,
        *,
        now_ms: int | None = None,
        final: bool = False,
        declared: Mapping[str, MessageClass] | None = None,
    ) -> list[Violation]: ...


def check_function(monitor_class: type[Monitor]) -> CheckFunction:
    """The module-level `check` of one invariant: a fresh monitor fed the whole trace."""

    def check(
        trace: Sequence[TraceEvent],
        params: CheckParams = DEFAULT_PARAMS,
        *,
        now_ms: int | None = None,
        final: bool = False,
        declared: Mapping[str, MessageClass] | None = None,
    ) -> list[Violation]:
        return run_monitor(
            monitor_class(params), trace, now_ms=now_ms, final=final, declared=declared
        )

    check.__doc__ = f"{monitor_class.check_id}: {monitor_class.title}."
    return check
