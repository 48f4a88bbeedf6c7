"""Routers: the shared dispatch/answer path and the monolith (in-process, hierarchical) router.

Routers only ever see packaged deliveries (RawJson payloads), so their failure guards must
read the envelope: `delivery.may_answer()`, never the payload's type.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from invariants.trace import EventKind
from reference_impl.constants import HOP_MS
from reference_impl.envelope import Delivery
from reference_impl.hub import Intake
from reference_impl.messages import DeliveryFailure, ErrorType
from reference_impl.pool import LegHandle, LegOperation

if TYPE_CHECKING:
    from reference_impl.mesh import Mesh

_INTAKE_GATED = Intake.GATED  # a module constant: cheaper than the enum class lookup


class Router:
    """Dispatch into the routing pool; refuse once a stop has begun; answer failures."""

    name = "router"

    def __init__(self, mesh: Mesh) -> None:
        self.mesh = mesh

    def operation(self, delivery: Delivery) -> LegOperation:
        raise NotImplementedError

    def dispatch(self, delivery: Delivery) -> LegHandle | None:
        """Start a route leg for `delivery` (packaged here if it is not yet)."""
        delivery = delivery.package()
        mesh = self.mesh
        if mesh.silo.refusing:
            mesh.trace.emit(EventKind.DISPATCH_REFUSED, hub=self.name, delivery_id=delivery.id,
                            sender=delivery.sender, target=delivery.target,
                            message_type=delivery.message_type,
                            message_class=delivery.message_class,
                            diagnostic_key=delivery.diagnostic_key, packaged=True,
                            error=ErrorType.SHUTTING_DOWN.value)
            if not mesh.silo.stopped:
                self.answer_failure(delivery, ErrorType.SHUTTING_DOWN, local=True)
            return None
        return mesh.pool.subscribe(self.operation(delivery))

    def answer_failure(
        self, delivery: Delivery, error: ErrorType, *, local: bool = False, hub: str | None = None
    ) -> None:
        """Answer a routing failure: never a delivery whose envelope forbids an answer."""
        if not delivery.may_answer():
            self.mesh.trace.emit(EventKind.ANSWER_SUPPRESSED, hub=hub or self.name,
                                 delivery_id=delivery.id, reason="may_answer_false",
                                 message_class=delivery.message_class,
                                 packaged=delivery.packaged)
            return
        failure = DeliveryFailure(delivery.id, error)
        self.mesh.answers.send(delivery, failure, hub=hub or self.name, local=local)


class MonolithRouteOperation(LegOperation):
    """One hop to the target hub's intake; a missing target is answered NotFound by its
    nearest live ancestor (hierarchical routing), a gated intake ShuttingDown."""

    def __init__(self, router: MonolithRouter, delivery: Delivery) -> None:
        super().__init__(delivery)
        self.router = router

    def run(self, leg: LegHandle) -> None:
        delay = HOP_MS + self.router.mesh.faults.slow_ms(self.delivery.target)
        leg.schedule(delay, self._arrive, leg)

    def _arrive(self, leg: LegHandle) -> None:
        mesh, delivery = self.router.mesh, self.delivery
        hub = mesh.hubs.get(delivery.target)
        if hub is None:
            self.router.answer_failure(delivery, ErrorType.NOT_FOUND,
                                       hub=mesh.nearest_live_ancestor(delivery.target))
            leg.end("failed")
            return
        if hub.offer(delivery) is _INTAKE_GATED:
            self.router.answer_failure(delivery, ErrorType.SHUTTING_DOWN, hub=hub.address)
            leg.end("failed")
            return
        leg.end()


class MonolithRouter(Router):
    name = "monolith"

    def operation(self, delivery: Delivery) -> LegOperation:
        return MonolithRouteOperation(self, delivery)
