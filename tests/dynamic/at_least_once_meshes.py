"""Adapters that declare at least once, over the reference mesh or a pre-fix mutant of it.

`AppliedEachRun` wraps an adapter, declares `Capability.AT_LEAST_ONCE` besides what the
inner one declares, and reports `EFFECT_APPLIED` where the callee runs a grain call (the
delivery's `POSTED` at the target its `ATTEMPT` named): every run, or (`dedupe`) only the
first of each delivery, as a callee that de-duplicates re-sends would. Over M2
resend-timeouts, which sends a timed-out call again, the first applies a delivery twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from invariants.adapter import AdapterFactory, Capability, Chooser, MeshAdapter
from invariants.adapter_calls import MESH_ID_ATTRIBUTE, factory_name
from invariants.capabilities import capabilities_of
from invariants.trace import EventKind, TraceEvent


class AppliedEachRun:
    def __init__(self, inner: MeshAdapter, *, dedupe: bool) -> None:
        self.inner = inner
        self.dedupe = dedupe
        self.capabilities = capabilities_of(inner) | {Capability.AT_LEAST_ONCE}
        self._read = 0  # inner events translated so far
        self._events: list[TraceEvent] = []
        self._targets: dict[str, str] = {}  # delivery id -> the target its calls name
        self._applied: set[str] = set()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def _append(self, event: TraceEvent) -> None:
        self._events.append(replace(event, seq=len(self._events)))

    def trace(self) -> Sequence[TraceEvent]:
        inner = self.inner.trace()
        for event in inner[self._read:]:
            self._append(event)
            did = event.delivery_id
            if did is None:
                continue
            if event.kind is EventKind.ATTEMPT and event.target is not None:
                self._targets[did] = event.target
            elif event.kind is EventKind.POSTED and self._targets.get(did) == event.hub:
                if not (self.dedupe and did in self._applied):
                    self._append(TraceEvent(0, event.time_ms, EventKind.EFFECT_APPLIED,
                                            hub=event.hub, delivery_id=did))
                self._applied.add(did)
        self._read = len(inner)
        return list(self._events)


def applied_each_run(inner: AdapterFactory, *, dedupe: bool) -> AdapterFactory:
    def make(chooser: Chooser) -> MeshAdapter:
        return AppliedEachRun(inner(chooser), dedupe=dedupe)  # type: ignore[return-value]

    kind = "dedupe" if dedupe else "applied-each-run"
    setattr(make, MESH_ID_ATTRIBUTE, f"{factory_name(inner)}+at-least-once:{kind}")
    return make
