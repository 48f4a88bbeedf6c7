"""The bounded subscribe primitive: first answer, a timeout, at most N retries, then silence.

Retries happen only on a DeliveryFailure or a timeout, with delays of 250 ms doubling; once
the budget is spent the subscription errors terminally and nothing more is sent for it.
The bound is in the primitive, so no caller can make it unbounded.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING

from invariants.trace import EventKind, MessageClass
from reference_impl.constants import (
    SUBSCRIBE_FIRST_DELAY_MS,
    SUBSCRIBE_RETRIES,
    SUBSCRIBE_TIMEOUT_MS,
)
from reference_impl.envelope import Delivery
from reference_impl.messages import SUBSCRIBE_REQUEST, ErrorType, Message
from reference_impl.scheduler import Timer

if TYPE_CHECKING:
    from reference_impl.mesh import Mesh


class SubscriptionState(StrEnum):
    ACTIVE = "active"
    ANSWERED = "answered"
    TERMINATED = "terminated"


class BoundedSubscription:
    """One subscription of `subscriber` to `target`."""

    def __init__(
        self,
        mesh: Mesh,
        subscription_id: str,
        subscriber: str,
        target: str,
        *,
        retries: int = SUBSCRIBE_RETRIES,
        timeout_ms: int = SUBSCRIBE_TIMEOUT_MS,
        first_delay_ms: int = SUBSCRIBE_FIRST_DELAY_MS,
    ) -> None:
        if retries < 0:
            raise ValueError(f"subscribe retries must be >= 0, got {retries}")
        self.mesh = mesh
        self.id = subscription_id
        self.subscriber = subscriber
        self.target = target
        self.retries = retries
        self.timeout_ms = timeout_ms
        self.first_delay_ms = first_delay_ms
        self.state = SubscriptionState.ACTIVE
        self.attempt = -1
        self.pending_request: str | None = None
        self._timer: Timer | None = None

    def start(self) -> None:
        self._send(0)

    def _send(self, attempt: int) -> None:
        if self.state is not SubscriptionState.ACTIVE:
            return
        mesh = self.mesh
        self.attempt = attempt
        request = Delivery(mesh.new_id("d"), self.subscriber, self.target,
                           Message(SUBSCRIBE_REQUEST, MessageClass.USER),
                           identity="system", subscription_id=self.id)
        self.pending_request = request.id
        mesh.pending_requests[request.id] = self
        mesh.trace.emit(EventKind.SUBSCRIBE_ATTEMPT, hub=self.subscriber, subscription_id=self.id,
                        attempt=attempt, target=self.target, delivery_id=request.id)
        self._timer = mesh.scheduler.after(self.timeout_ms, self._timed_out, request.id)
        mesh.monolith.dispatch(request)

    def on_answer(self, request_id: str) -> None:
        """The first answer wins; anything later is ignored."""
        if self.state is not SubscriptionState.ACTIVE or request_id != self.pending_request:
            return
        self._cancel_timer()
        self.state = SubscriptionState.ANSWERED
        self.mesh.trace.emit(EventKind.SUBSCRIBE_ANSWERED, hub=self.subscriber,
                             subscription_id=self.id, attempt=self.attempt)

    def on_failure(self, request_id: str, error: ErrorType) -> None:
        if self.state is not SubscriptionState.ACTIVE or request_id != self.pending_request:
            return
        self._cancel_timer()
        self._retry_or_terminate(error.value)

    def _timed_out(self, request_id: str) -> None:
        if self.state is SubscriptionState.ACTIVE and request_id == self.pending_request:
            self._retry_or_terminate("timeout")

    def _retry_or_terminate(self, cause: str) -> None:
        self.pending_request = None
        if self.attempt < self.retries:
            delay = self.first_delay_ms * (1 << self.attempt)
            self.mesh.scheduler.after(delay, self._send, self.attempt + 1)
            return
        self.state = SubscriptionState.TERMINATED
        self.mesh.trace.emit(EventKind.SUBSCRIBE_TERMINATED, hub=self.subscriber,
                             subscription_id=self.id, attempt=self.attempt,
                             reason=f"retries_exhausted:{cause}")

    def terminate(self, reason: str) -> None:
        """End an active subscription from outside (the silo stopped): nothing more is sent."""
        if self.state is not SubscriptionState.ACTIVE:
            return
        self._cancel_timer()
        self.pending_request = None
        self.state = SubscriptionState.TERMINATED
        self.mesh.trace.emit(EventKind.SUBSCRIBE_TERMINATED, hub=self.subscriber,
                             subscription_id=self.id, attempt=self.attempt, reason=reason)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
