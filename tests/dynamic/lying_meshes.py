"""Meshes whose trace tells another story than what happened, for the ground-truth checks.

Each wraps a (reference or pre-fix) adapter and rewrites the events it reports, so the
mesh behaves one way and its trace claims another; the harness facts (what the machine
itself posted, injected and asked for) are what catches the lie. The pre-fix shapes are
defined here, with honest traces, as the controls.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from invariants.adapter import Chooser, Fault, FaultKind, MessageSpec, Route
from invariants.trace import EventKind, TraceEvent
from reference_impl.adapter import ReferenceAdapter
from reference_impl.breaker import StormBreaker
from reference_impl.constants import retry_delay_ms
from reference_impl.envelope import Delivery
from reference_impl.grain import GrainDeliveryOperation, GrainRouter
from reference_impl.ladder import classify, is_resendable, is_timeout, is_transient
from reference_impl.pool import LegHandle, LegOperation

Rewrite = Callable[[TraceEvent], TraceEvent]
Gate = Callable[[Exception], bool]


class _GatedRetry(GrainDeliveryOperation):
    """The grain delivery with its retry gate and delay as parameters."""

    gate: Gate = staticmethod(is_resendable)
    slowdown = 1

    def _failed(self, leg: LegHandle, attempt: int, exc: Exception) -> None:
        self.waiting_attempt = -1
        mesh = self.router.mesh
        mesh.trace.emit(EventKind.ATTEMPT_FAILED, hub=self.router.name,
                        delivery_id=self.delivery.id, attempt=attempt,
                        error=type(exc).__name__, timed_out=is_timeout(exc))
        if self.gate(exc) and attempt < self.router.retries:
            leg.schedule(self.slowdown * retry_delay_ms(attempt), self.deliver, leg,
                         attempt + 1)
            return
        self.router.answer_failure(self.delivery, classify(exc))
        leg.end("failed")


def _grain_router(operation: type[_GatedRetry]) -> type[GrainRouter]:
    class Router(GrainRouter):
        def operation(self, delivery: Delivery) -> LegOperation:
            return operation(self, delivery)

    return Router


class _ResendsTimeoutsOp(_GatedRetry):
    gate = staticmethod(is_transient)  # pre-fix: admits timeouts


class _LateRetryOp(_GatedRetry):
    slowdown = 4  # every retry comes, but four backoffs after its failure


class ResendsTimeouts(ReferenceAdapter):
    """INV4's pre-fix mesh: the retry gates on is_transient, so a timed-out call is re-sent."""

    def __init__(self, chooser: Chooser | None = None) -> None:
        super().__init__(chooser)
        router = _grain_router(_ResendsTimeoutsOp)
        self.mesh.grain = router(self.mesh, retries=self.mesh.grain.retries)


class RetriesLate(ReferenceAdapter):
    """INV4: each retry of a rejected delivery comes four backoffs after its failure."""

    def __init__(self, chooser: Chooser | None = None) -> None:
        super().__init__(chooser)
        router = _grain_router(_LateRetryOp)
        self.mesh.grain = router(self.mesh, retries=self.mesh.grain.retries)


class _Anonymous:
    """A delivery seen without its payload identity."""

    diagnostic_key = None

    def __init__(self, delivery: Delivery) -> None:
        self._delivery = delivery

    def __getattr__(self, name: str) -> Any:
        return getattr(self._delivery, name)


class _TupleKeyBreaker(StormBreaker):
    def admit(self, delivery: Delivery, now_ms: int) -> tuple[bool, bool]:
        return super().admit(_Anonymous(delivery), now_ms)  # type: ignore[arg-type]


class KeyWithoutIdentity(ReferenceAdapter):
    """INV6's pre-fix mesh: the breaker keys on (sender, target, type), so a wide fan-out
    looks like one thing looping."""

    def create_hub(self, address: str, *, watermark: int | None = None,
                   breaker_threshold: int | None = None) -> None:
        super().create_hub(address, watermark=watermark, breaker_threshold=breaker_threshold)
        hub = self.mesh.hubs[address]
        hub.breaker = _TupleKeyBreaker(threshold=hub.breaker.threshold)

    def post(self, sender: str, target: str, message: MessageSpec, *,
             identity: str | None = "user", route: Route = Route.MONOLITH) -> str:
        self.mesh.ensure_hub(sender)
        hub = self.mesh.hubs[sender]
        if not isinstance(hub.breaker, _TupleKeyBreaker):
            hub.breaker = _TupleKeyBreaker()
        return super().post(sender, target, message, identity=identity, route=route)


class _Rewritten:
    """The events of `inner`, each passed through `rewrite` once (kept, so `trace()`
    stays incremental)."""

    def __init__(self, rewrite: Rewrite) -> None:
        self._rewrite = rewrite
        self._told: list[TraceEvent] = []

    def of(self, events: Sequence[TraceEvent]) -> Sequence[TraceEvent]:
        told = self._told
        told.extend(self._rewrite(e) for e in events[len(told):])
        return told


def _timeouts_as_rejections(event: TraceEvent) -> TraceEvent:
    if event.kind is EventKind.ATTEMPT_FAILED and event.timed_out:
        return replace(event, error="RejectionError", timed_out=False)
    return event


class ResendsTimeoutsCallingThemRejections(ResendsTimeouts):
    """INV4's pre-fix mesh (re-sends timed-out calls) whose trace reports every timeout
    as a rejection, so its re-sends look like the retries a rejection is owed."""

    def __init__(self, chooser: Chooser | None = None) -> None:
        super().__init__(chooser)
        self._told = _Rewritten(_timeouts_as_rejections)

    def trace(self) -> Sequence[TraceEvent]:
        return self._told.of(super().trace())


def _no_identity(event: TraceEvent) -> TraceEvent:
    if event.kind is EventKind.POSTED and event.diagnostic_key is not None:
        return replace(event, diagnostic_key=None)
    return event


class KeyWithoutIdentityHidingIt(KeyWithoutIdentity):
    """INV6's pre-fix mesh (breaker keyed on the 3-tuple) whose POSTED events leave the
    payload identity out, so its drops look like a storm on one key."""

    def __init__(self, chooser: Chooser | None = None) -> None:
        super().__init__(chooser)
        self._told = _Rewritten(_no_identity)

    def trace(self) -> Sequence[TraceEvent]:
        return self._told.of(super().trace())


def _stages_renumbered(event: TraceEvent) -> TraceEvent:
    if event.stage is not None and event.stage > 0:
        return replace(event, stage=event.stage + 100_000)
    return event


class RenumberedStages(ReferenceAdapter):
    """A correct mesh whose lifecycle numbers its stop stages otherwise (Active 120000)."""

    def __init__(self, chooser: Chooser | None = None) -> None:
        super().__init__(chooser)
        self._told = _Rewritten(_stages_renumbered)

    def trace(self) -> Sequence[TraceEvent]:
        return self._told.of(super().trace())


class NeverTimesOut(ReferenceAdapter):
    """A correct mesh that cannot be made to time out: TIMEOUT_NEXT, AGGREGATE_NEXT (which
    holds a timeout) and slow destinations are ignored, so no grain call ever outlives the
    response timeout."""

    def inject(self, fault: Fault) -> None:
        if fault.kind not in (FaultKind.TIMEOUT_NEXT, FaultKind.AGGREGATE_NEXT,
                              FaultKind.SLOW_DESTINATION):
            super().inject(fault)
