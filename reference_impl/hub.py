"""A hub: one action block (a single-threaded queue, one message per turn) and its intake.

Intake order: teardown gate → identity guard → per-key storm breaker → aggregate shed →
enqueue. A handler's posts queue behind the current turn; a faulting handler is logged and
the pump goes on.
"""

from __future__ import annotations

from collections import deque
from enum import StrEnum
from typing import TYPE_CHECKING

from invariants.trace import EventKind, MessageClass
from reference_impl.breaker import AggregateWatermark, StormBreaker
from reference_impl.envelope import Delivery
from reference_impl.messages import DeliveryFailure, ErrorType
from reference_impl.scheduler import Timer
from reference_impl.tracing import TAG_ENQUEUED, TAG_HANDLED

if TYPE_CHECKING:
    from reference_impl.mesh import Mesh


class Intake(StrEnum):
    ENQUEUED = "enqueued"
    REJECTED = "rejected"  # terminal: never answered
    GATED = "gated"  # a route leg answers it ShuttingDown; a direct post is not answered
    DROPPED = "dropped"  # answer Ignored: never NACKed
    SHED = "shed"  # answer Ignored: never NACKed


# Enum members read off their class cost a slow attribute lookup each time: the intake
# path, run for every delivery, reads them from these module constants instead.
_SYSTEM = MessageClass.SYSTEM
_GATED, _REJECTED, _DROPPED, _SHED = (
    EventKind.GATED, EventKind.REJECTED, EventKind.DROPPED, EventKind.SHED
)
_INTAKE_GATED, _INTAKE_REJECTED, _INTAKE_DROPPED, _INTAKE_SHED, _INTAKE_ENQUEUED = (
    Intake.GATED, Intake.REJECTED, Intake.DROPPED, Intake.SHED, Intake.ENQUEUED
)


class Hub:
    """One addressable hub of the mesh."""

    def __init__(self, mesh: Mesh, address: str, watermark: AggregateWatermark,
                 breaker: StormBreaker) -> None:
        self.mesh = mesh
        self.address = address
        self.queue: deque[Delivery] = deque()
        self.breaker = breaker
        self.watermark = watermark
        self.gated = False  # teardown gate: closed once application messages are blocked
        self.blocked = False  # the turn is held (fault injection)
        self._blocked_until = 0
        self.removed = False
        self.handled_count = 0
        self._pump_pending = False  # the turn timer is scheduled (at most once at a time)
        self._turn_timer = Timer(0, self._turn, ())
        # Read on every intake and turn: held here rather than looked up through the mesh.
        self._scheduler = mesh.scheduler
        self._trace = mesh.trace
        self._handlers = mesh._handlers

    def offer(self, delivery: Delivery) -> Intake:
        """One intake; the trace reads it back as POSTED, then exactly one outcome event."""
        trace = self._trace
        scheduler = self._scheduler
        address = self.address
        depth = len(self.queue)
        message_class = delivery.message_class
        if self.gated:
            trace.intake(address, delivery, _GATED, depth)
            return _INTAKE_GATED
        if delivery.identity is None and message_class is not _SYSTEM:
            trace.intake(address, delivery, _REJECTED, depth)
            return _INTAKE_REJECTED
        admitted, tripped = self.breaker.admit(delivery, scheduler.now)
        if not admitted:
            trace.intake(address, delivery, _DROPPED, depth, tripped=tripped)
            return _INTAKE_DROPPED
        if self.watermark.should_shed(message_class, depth):
            self.watermark.shed_count += 1
            trace.intake(address, delivery, _SHED, depth, self.watermark.watermark)
            return _INTAKE_SHED
        self.queue.append(delivery)
        # What `trace.enqueued(address, delivery, depth)` records, appended here directly:
        # one call fewer on every delivery (a test pins the two alike).
        records = trace.records
        if records is not None:
            records += (
                TAG_ENQUEUED, scheduler.now, address, delivery.id, delivery.sender,
                delivery.target, delivery.message_type, message_class, delivery.diagnostic_key,
                delivery.packaged, delivery.subscription_id, depth,
            )
        if not self._pump_pending and not self.blocked:
            self._pump_pending = True
            scheduler.rearm(self._turn_timer, scheduler.now)
        return _INTAKE_ENQUEUED

    def _turn(self) -> None:
        """One turn of the action block: handle exactly one message."""
        self._pump_pending = False
        queue = self.queue
        if self.blocked or self.removed or not queue:
            return
        delivery = queue.popleft()
        self.handled_count += 1
        scheduler = self._scheduler
        records = self._trace.records  # what `handled(...)` records, appended directly
        if records is not None:
            records += (TAG_HANDLED, scheduler.now, self.address, delivery.id,
                        delivery.message_type)
        try:
            # The mesh's handler table, read directly (most types need nothing).
            handler = self._handlers.get(delivery.message_type)
            if handler is not None:
                handler(self, delivery)
        except Exception as exc:  # a faulting handler is logged; the pump goes on
            self.mesh.trace.emit(EventKind.HANDLER_FAULTED, hub=self.address,
                                 delivery_id=delivery.id, error=type(exc).__name__)
        if queue:
            self._pump_pending = True
            scheduler.rearm(self._turn_timer, scheduler.now)

    def block(self, duration_ms: int) -> None:
        """Hold the turn for `duration_ms`; overlapping holds last until the latest ends."""
        scheduler = self.mesh.scheduler
        until = scheduler.now + duration_ms
        if self.blocked and until <= self._blocked_until:
            return
        if not self.blocked:
            self.blocked = True
            self.mesh.trace.emit(EventKind.TURN_BLOCKED, hub=self.address)
        self._blocked_until = until
        scheduler.at(until, self._release_if_due)

    def _release_if_due(self) -> None:
        if not self.blocked or self.mesh.scheduler.now < self._blocked_until:
            return
        self.blocked = False
        self.mesh.trace.emit(EventKind.TURN_RELEASED, hub=self.address)
        if self.queue and not self._pump_pending:
            self._pump_pending = True
            self.mesh.scheduler.rearm(self._turn_timer, self.mesh.scheduler.now)

    def report_failure(self, delivery: Delivery, error: ErrorType) -> None:
        report_failure(self.mesh, self.address, delivery, error)


def report_failure(mesh: Mesh, at: str, delivery: Delivery, error: ErrorType) -> None:
    """The reporting tail: answer a delivery that `at` could not get through, locally to its
    sender; only when `may_answer()` holds and only once per request id."""
    if not delivery.may_answer():
        mesh.trace.emit(EventKind.ANSWER_SUPPRESSED, hub=at, delivery_id=delivery.id,
                        reason="may_answer_false", message_class=delivery.message_class,
                        packaged=delivery.packaged)
        return
    if mesh.answers.answered(delivery.id):
        mesh.trace.emit(EventKind.ANSWER_SUPPRESSED, hub=at, delivery_id=delivery.id,
                        reason="already_answered")
        return
    failure = DeliveryFailure(delivery.id, error)
    mesh.answers.send(delivery, failure, hub=at, local=True)
