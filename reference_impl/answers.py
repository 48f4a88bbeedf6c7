"""The answer ledger: one answer per request id, ever, and how a NACK travels.

Emit sites build the `DeliveryFailure` (each behind its own `may_answer()` guard) and hand
it here. A NACK to a remote sender is a counted leg in the routing pool, so a stop waits
for it to land; a NACK for a refusal at dispatch takes the local route (no leg).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from invariants.trace import EventKind
from reference_impl.constants import HOP_MS
from reference_impl.envelope import Delivery
from reference_impl.hub import report_failure
from reference_impl.messages import DeliveryFailure, ErrorType
from reference_impl.pool import NACK, LegHandle, LegOperation

if TYPE_CHECKING:
    from reference_impl.mesh import Mesh

NACK_IDENTITY = "system"


class NackOperation(LegOperation):
    """Carries one NACK across the router to the original sender's hub."""

    kind = NACK

    def __init__(self, mesh: Mesh, nack: Delivery) -> None:
        super().__init__(nack)
        self.mesh = mesh
        self.nack = nack

    def run(self, leg: LegHandle) -> None:
        leg.schedule(HOP_MS, self._land, leg)

    def _land(self, leg: LegHandle) -> None:
        mesh, nack = self.mesh, self.nack
        hub = mesh.hubs.get(nack.target)
        if hub is not None:
            hub.offer(nack)
        else:  # the sender has gone: a failure to deliver a failure, never answered
            report_failure(mesh, mesh.nearest_live_ancestor(nack.target), nack,
                           ErrorType.NOT_FOUND)
        leg.end()


class AnswerLedger:
    """Remembers every request id answered, and sends the answers."""

    def __init__(self, mesh: Mesh) -> None:
        self.mesh = mesh
        self._answered: set[str] = set()

    def answered(self, delivery_id: str) -> bool:
        return delivery_id in self._answered

    def send(self, delivery: Delivery, failure: DeliveryFailure, *, hub: str, local: bool) -> bool:
        """Answer `delivery` with `failure` unless it was answered before; True when sent."""
        mesh = self.mesh
        if delivery.id in self._answered:
            mesh.trace.emit(EventKind.ANSWER_SUPPRESSED, hub=hub, delivery_id=delivery.id,
                            reason="already_answered")
            return False
        if mesh.silo.stopped:
            mesh.trace.emit(EventKind.ANSWER_SUPPRESSED, hub=hub, delivery_id=delivery.id,
                            reason="silo_stopped")
            return False
        self._answered.add(delivery.id)
        nack = Delivery(mesh.new_id("d"), delivery.target, delivery.sender, failure,
                        identity=NACK_IDENTITY)
        mesh.trace.emit(EventKind.FAILURE_EMITTED, hub=hub, delivery_id=nack.id,
                        answers=delivery.id, error=failure.error.value, sender=delivery.target,
                        target=delivery.sender)
        if local:
            sender_hub = mesh.hubs.get(delivery.sender)
            if sender_hub is not None:
                sender_hub.offer(nack)
        else:
            self.send_nack(NackOperation(mesh, nack.package()))
        return True

    def send_nack(self, nack: NackOperation) -> LegHandle | None:
        """The NACK runs inside the routing pool as a counted leg; its handle is kept."""
        handle = self.mesh.pool.subscribe(nack)
        return handle
