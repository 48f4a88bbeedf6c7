"""The grain router: placement onto activations, grain calls, and the delivery retry ladder.

A rejected call (invalid activation) is refused at once and held by nobody: re-sending it is
safe. A call that outlives the response timeout was accepted: the callee still holds it and
will still run it, so re-sending duplicates the work. The non-idempotent retry therefore
gates on `is_resendable`, and the grain delivery is part of its leg: the leg ends only once
the call has answered or the retries are spent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from invariants.trace import EventKind
from reference_impl.constants import (
    DELIVERY_RETRIES,
    HOP_MS,
    RESPONSE_TIMEOUT_MS,
    retry_delay_ms,
)
from reference_impl.envelope import Delivery
from reference_impl.errors import (
    RejectionError,
    ResponseTimeout,
    ShuttingDownError,
    TargetNotFoundError,
)
from reference_impl.hub import Intake
from reference_impl.ladder import classify, is_resendable, is_timeout
from reference_impl.pool import LegHandle, LegOperation
from reference_impl.routing import Router
from reference_impl.scheduler import Timer

if TYPE_CHECKING:
    from reference_impl.mesh import Mesh


class HeldCall:
    """A call in an activation's work queue: it runs even after its caller gave up."""

    __slots__ = ("attempt", "operation", "timer")

    def __init__(self, operation: GrainDeliveryOperation, attempt: int) -> None:
        self.operation = operation
        self.attempt = attempt
        self.timer: Timer | None = None


class Activations:
    """The callee side: work queues of held calls, emptied when grains deactivate."""

    def __init__(self, mesh: Mesh) -> None:
        self.mesh = mesh
        self.held: dict[int, HeldCall] = {}
        self._next = 0
        self.deactivated = False

    def accept(self, call: HeldCall, run_after_ms: int) -> None:
        self._next += 1
        key = self._next
        self.held[key] = call
        call.timer = self.mesh.scheduler.after(run_after_ms, self._run, key)

    def _run(self, key: int) -> None:
        call = self.held.pop(key)
        call.operation.callee_ran(call.attempt)

    def deactivate_all(self) -> int:
        """Drop every held call (the activations are gone); returns how many."""
        dropped = len(self.held)
        for call in self.held.values():
            if call.timer is not None:
                call.timer.cancel()
        self.held.clear()
        self.deactivated = True
        return dropped


class GrainDeliveryOperation(LegOperation):
    """Deliver to the target hub's grain, with the bounded non-idempotent retry."""

    def __init__(self, router: GrainRouter, delivery: Delivery) -> None:
        super().__init__(delivery)
        self.router = router
        self.delivery = delivery
        self.leg: LegHandle | None = None
        self.waiting_attempt = -1  # the attempt whose answer the caller still awaits
        self._response_timer: Timer | None = None

    def run(self, leg: LegHandle) -> None:
        self.leg = leg
        self.deliver(leg, 0)

    def deliver(self, leg: LegHandle, attempt: int) -> None:
        mesh, delivery = self.router.mesh, self.delivery
        target = delivery.target
        mesh.trace.emit(EventKind.ATTEMPT, hub=self.router.name, delivery_id=delivery.id,
                        target=target, attempt=attempt)
        self.waiting_attempt = attempt
        if mesh.faults.take_reject(target):
            error: Exception = RejectionError(f"{target}: invalid activation, rejecting now")
            leg.schedule(HOP_MS, self._failed, leg, attempt, error)
            return
        if target not in mesh.hubs or mesh.activations.deactivated:
            leg.schedule(HOP_MS, self._failed, leg, attempt, TargetNotFoundError(target))
            return
        run_after = HOP_MS + mesh.faults.slow_ms(target)
        timeout = ResponseTimeout(f"{target}: no response within {RESPONSE_TIMEOUT_MS} ms")
        failure: Exception = timeout
        aggregate = mesh.faults.take_aggregate(target)
        if aggregate is not None:
            # One transport timed out, the other refused: the callee holds the call all
            # the same, and the caller sees both, in either order.
            refused = RejectionError(f"{target}: refused on the second transport")
            members = [timeout, refused] if aggregate else [refused, timeout]
            failure = ExceptionGroup(f"{target}: both transports failed", members)
        if aggregate is not None or mesh.faults.take_timeout(target):
            run_after = RESPONSE_TIMEOUT_MS + HOP_MS  # the callee gets to it after we gave up
        mesh.trace.emit(EventKind.CALL_RECEIVED, hub=target, delivery_id=delivery.id,
                        attempt=attempt)
        mesh.activations.accept(HeldCall(self, attempt), run_after)
        self._response_timer = leg.schedule(
            RESPONSE_TIMEOUT_MS, self._failed, leg, attempt, failure,
        )

    def callee_ran(self, attempt: int) -> None:
        """The held call ran at the callee: the delivery joins the target hub's queue."""
        mesh, delivery = self.router.mesh, self.delivery
        hub = mesh.hubs.get(delivery.target)
        outcome = hub.offer(delivery) if hub is not None else None
        leg = self.leg
        if leg is None or leg.ended or attempt != self.waiting_attempt:
            return  # the caller gave up on this attempt; the work ran all the same
        if self._response_timer is not None:
            self._response_timer.cancel()
        if outcome is None:
            self._failed(leg, attempt, TargetNotFoundError(delivery.target))
        elif outcome is Intake.GATED:
            self._failed(leg, attempt, ShuttingDownError(f"{delivery.target} is stopping"))
        else:
            leg.end()

    def _failed(self, leg: LegHandle, attempt: int, exc: Exception) -> None:
        self.waiting_attempt = -1
        mesh = self.router.mesh
        mesh.trace.emit(EventKind.ATTEMPT_FAILED, hub=self.router.name,
                        delivery_id=self.delivery.id, attempt=attempt,
                        error=type(exc).__name__, timed_out=is_timeout(exc))
        if is_resendable(exc) and attempt < self.router.retries:
            leg.schedule(retry_delay_ms(attempt), self.deliver, leg, attempt + 1)
            return
        self.router.answer_failure(self.delivery, classify(exc))
        leg.end("failed")


class GrainRouter(Router):
    name = "grain"

    def __init__(self, mesh: Mesh, *, retries: int = DELIVERY_RETRIES) -> None:
        super().__init__(mesh)
        if retries < 0:
            raise ValueError(f"delivery retries must be >= 0, got {retries}")
        self.retries = retries

    def operation(self, delivery: Delivery) -> LegOperation:
        return GrainDeliveryOperation(self, delivery)
