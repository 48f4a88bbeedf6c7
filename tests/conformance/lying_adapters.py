"""Adapters whose traces break one convention each: the reference adapter with its trace
rewritten on the way out (the mesh behaves; only its account of what happened is wrong),
so each broken convention is the only thing that differs from a conforming adapter."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from invariants.adapter import (
    Capability,
    Chooser,
    Fault,
    FaultKind,
    FirstChooser,
    MessageSpec,
    Route,
)
from invariants.trace import EventKind, TraceEvent
from reference_impl.adapter import ReferenceAdapter
from reference_impl.faults import FaultBook

Rewrite = Callable[[list[TraceEvent]], list[TraceEvent]]


class Lying(ReferenceAdapter):
    rewrite: Rewrite = staticmethod(lambda events: events)  # type: ignore[assignment]

    def trace(self) -> Sequence[TraceEvent]:
        events = type(self).rewrite(list(super().trace()))
        return [dataclasses.replace(e, seq=i) for i, e in enumerate(events)]


def lying(rewrite: Rewrite, **attributes: object) -> Callable[[Chooser], ReferenceAdapter]:
    cls = type("Lying", (Lying,), {"rewrite": staticmethod(rewrite), **attributes})
    return lambda chooser: cls(chooser)


def without_first(kind: EventKind) -> Rewrite:
    def rewrite(events: list[TraceEvent]) -> list[TraceEvent]:
        index = next((i for i, e in enumerate(events) if e.kind is kind), None)
        return events if index is None else events[:index] + events[index + 1 :]
    return rewrite


def without_all(kind: EventKind) -> Rewrite:
    return lambda events: [e for e in events if e.kind is not kind]


def edit_first(kind: EventKind, **changes: object) -> Rewrite:
    def rewrite(events: list[TraceEvent]) -> list[TraceEvent]:
        for i, e in enumerate(events):
            if e.kind is kind:
                return [*events[:i], dataclasses.replace(e, **changes), *events[i + 1 :]]
        return events
    return rewrite


def plus_custom(name: str, **data: object) -> Rewrite:
    """The trace and one custom event more at its end (its name and fields unchecked)."""
    def rewrite(events: list[TraceEvent]) -> list[TraceEvent]:
        last = events[-1]
        return [*events, TraceEvent(len(events), last.time_ms, EventKind.CUSTOM, hub=last.hub,
                                    custom=name, data=tuple(data.items()))]  # type: ignore[arg-type]
    return rewrite


def unpackaged(events: list[TraceEvent]) -> list[TraceEvent]:
    """Every delivery reported as arriving unpackaged, whichever route carried it."""
    return [dataclasses.replace(e, packaged=False) if e.kind is EventKind.POSTED else e
            for e in events]


def time_goes_back(events: list[TraceEvent]) -> list[TraceEvent]:
    """The last event dated back to the start, after events later than that."""
    return [*events[:-1], dataclasses.replace(events[-1], time_ms=0)]


def no_grain_router(chooser: Chooser) -> ReferenceAdapter:
    adapter = ReferenceAdapter(chooser)
    adapter.capabilities = frozenset({Capability.SUBSCRIBE, Capability.STOP_LIFECYCLE})  # type: ignore[attr-defined]
    return adapter


def raises_on_stop(chooser: Chooser) -> ReferenceAdapter:
    class Raising(ReferenceAdapter):
        def stop(self, *, graceful: bool = True) -> None:
            raise KeyError("h0")

    return Raising(chooser)


def never_asks(chooser: Chooser) -> ReferenceAdapter:
    """The reference mesh on a FIFO schedule of its own: it never asks the harness."""
    return ReferenceAdapter(FirstChooser())


class _AskedThenFifo:
    """Asks the harness's Chooser and runs the first option whatever it answered."""

    def __init__(self, chooser: Chooser) -> None:
        self.chooser = chooser

    def choose(self, options: int, why: str) -> int:
        self.chooser.choose(options, why)
        return 0


def ignores_the_answer(chooser: Chooser) -> ReferenceAdapter:
    return ReferenceAdapter(_AskedThenFifo(chooser))


class _SpentAtAttempt(FaultBook):
    """Spends an armed timeout (or aggregate) at the call's ATTEMPT, where it spends a
    rejection, instead of at the call that reaches the callee."""

    def __init__(self, kind: FaultKind) -> None:
        super().__init__()
        self._kind = kind
        self._timeout_now = False
        self._aggregate_now: bool | None = None

    def take_reject(self, target: str) -> bool:
        if self._kind is FaultKind.TIMEOUT_NEXT:
            self._timeout_now = super().take_timeout(target)
        else:
            self._aggregate_now = super().take_aggregate(target)
        return super().take_reject(target)

    def take_timeout(self, target: str) -> bool:
        if self._kind is not FaultKind.TIMEOUT_NEXT:
            return super().take_timeout(target)
        spent, self._timeout_now = self._timeout_now, False
        return spent

    def take_aggregate(self, target: str) -> bool | None:
        if self._kind is not FaultKind.AGGREGATE_NEXT:
            return super().take_aggregate(target)
        spent, self._aggregate_now = self._aggregate_now, None
        return spent


def spends_at_attempt(kind: FaultKind) -> Callable[[Chooser], ReferenceAdapter]:
    """The reference mesh spending `kind` when a call is sent, not when it is received."""
    def make(chooser: Chooser) -> ReferenceAdapter:
        adapter = ReferenceAdapter(chooser)
        adapter.mesh.faults = _SpentAtAttempt(kind)
        return adapter
    return make


def ignores_the_give_up(chooser: Chooser) -> ReferenceAdapter:
    """The reference mesh deaf to a second stop: a graceful hold outlives the give-up."""
    class Deaf(ReferenceAdapter):
        asked = False

        def stop(self, *, graceful: bool = True) -> None:
            if not self.asked:
                self.asked = True
                super().stop(graceful=graceful)

    return Deaf(chooser)


def _called(events: list[TraceEvent]) -> set[str | None]:
    return {e.delivery_id for e in events if e.kind is EventKind.ATTEMPT}


def grain_leg_ends_at_dispatch(events: list[TraceEvent]) -> list[TraceEvent]:
    """A grain delivery's leg said to end at its first call, before the call's outcome."""
    called = _called(events)
    end = next((i for i, e in enumerate(events) if e.kind is EventKind.LEG_ENDED
                and e.leg_kind != "nack" and e.delivery_id in called), None)
    if end is None:
        return events
    moved, rest = events[end], events[:end] + events[end + 1:]
    at = next(i for i, e in enumerate(rest)
              if e.kind is EventKind.ATTEMPT and e.delivery_id == moved.delivery_id)
    moved = dataclasses.replace(moved, time_ms=rest[at].time_ms)
    return [*rest[:at + 1], moved, *rest[at + 1:]]


def grain_failures_unanswered(events: list[TraceEvent]) -> list[TraceEvent]:
    """A grain delivery whose calls all failed is never answered."""
    called = _called(events)
    return [e for e in events
            if not (e.kind is EventKind.FAILURE_EMITTED and e.answers in called)]


class _HardStopByDefault(ReferenceAdapter):
    def stop(self, *, graceful: bool = False) -> None:
        super().stop(graceful=graceful)


def hard_stop_by_default(chooser: Chooser) -> ReferenceAdapter:
    """`stop()` without `graceful` is a hard stop: the protocol's default is graceful."""
    return _HardStopByDefault(chooser)


class _TwoRetriesByDefault(ReferenceAdapter):
    def subscribe(self, subscriber: str, target: str, *, retries: int = 2) -> str:
        return super().subscribe(subscriber, target, retries=retries)


def two_retries_by_default(chooser: Chooser) -> ReferenceAdapter:
    """`subscribe()` without `retries` retries twice: the protocol's default is 5."""
    return _TwoRetriesByDefault(chooser)


class _ZeroCountArmsOne(ReferenceAdapter):
    def inject(self, fault: Fault) -> None:
        super().inject(dataclasses.replace(fault, count=max(fault.count, 1)))


def zero_count_arms_one(chooser: Chooser) -> ReferenceAdapter:
    """A fault armed with `count=0` affects one call: the protocol's count is how many."""
    return _ZeroCountArmsOne(chooser)


class _FifoForPairs:
    """Asks the harness's Chooser only among three or more; of two, runs the older."""

    def __init__(self, chooser: Chooser) -> None:
        self.chooser = chooser

    def choose(self, options: int, why: str) -> int:
        return 0 if options == 2 else self.chooser.choose(options, why)


def fifo_for_pairs(chooser: Chooser) -> ReferenceAdapter:
    return ReferenceAdapter(_FifoForPairs(chooser))


class _IgnoresBreakerThreshold(ReferenceAdapter):
    def create_hub(self, address: str, *, watermark: int | None = None,
                   breaker_threshold: int | None = None) -> None:
        super().create_hub(address, watermark=watermark)


def ignores_breaker_threshold(chooser: Chooser) -> ReferenceAdapter:
    """Declares `breaker_threshold` and makes every hub with the mesh's own threshold."""
    return _IgnoresBreakerThreshold(chooser)


class _MonolithThroughGrain(ReferenceAdapter):
    def post(self, sender: str, target: str, message: MessageSpec, *,
             identity: str | None = "user", route: Route = Route.MONOLITH) -> str:
        routed = Route.GRAIN if route is Route.MONOLITH else route
        return super().post(sender, target, message, identity=identity, route=routed)


def monolith_through_grain(chooser: Chooser) -> ReferenceAdapter:
    """Sends the monolith router's posts through the grain router: not the route the
    harness chose."""
    return _MonolithThroughGrain(chooser)
