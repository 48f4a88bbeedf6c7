"""Adapters whose traces break one convention each: the reference adapter with its trace
rewritten on the way out (the mesh behaves; only its account of what happened is wrong),
so each broken convention is the only thing that differs from a conforming adapter."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from invariants.adapter import Capability, Chooser, FirstChooser
from invariants.trace import EventKind, TraceEvent
from reference_impl.adapter import ReferenceAdapter

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
