"""`ReferenceAdapter`: the reference mesh behind the `invariants.adapter.MeshAdapter` protocol.

Hubs are addressed by strings. A target must exist (create it with `create_hub`): a post
to a missing target is answered NotFound through `report_failure`. A sender's own hub is
created on first use.
"""

from __future__ import annotations

from collections.abc import Sequence

from invariants.adapter import Capability, Chooser, Fault, FaultKind, MessageSpec, Route
from invariants.trace import MessageClass, TraceEvent
from reference_impl.constants import DEFAULT_AGGREGATE_WATERMARK, DELIVERY_RETRIES
from reference_impl.envelope import fresh_delivery
from reference_impl.mesh import FAULTING_REQUEST, Mesh
from reference_impl.messages import DeliveryFailure, ErrorType, Message, new_message

# Enum members read off their class cost a slow attribute lookup each time: every post
# reads them from these module constants instead.
_DIRECT, _GRAIN, _FAILURE = Route.DIRECT, Route.GRAIN, MessageClass.FAILURE


class ReferenceAdapter:
    """Drives one reference mesh in virtual time."""

    # The reference models the whole protocol, the optional parts included. It is at most
    # once: a timed-out call is never sent again, so it does not declare at least once; its
    # scheduler asks "next-event" of every same-instant choice, marking no timer ties; and it
    # is one process, on no network.
    _NOT_MODELLED = frozenset({Capability.AT_LEAST_ONCE, Capability.TIMER_TIES,
                               Capability.NETWORK})
    capabilities = frozenset(Capability) - _NOT_MODELLED

    def __init__(
        self,
        chooser: Chooser | None = None,
        *,
        record_trace: bool = True,
        delivery_retries: int = DELIVERY_RETRIES,
        default_watermark: int = DEFAULT_AGGREGATE_WATERMARK,
        roundtrip_envelopes: bool = False,
    ) -> None:
        self.mesh = Mesh(
            chooser,
            record_trace=record_trace,
            delivery_retries=delivery_retries,
            default_watermark=default_watermark,
            roundtrip_envelopes=roundtrip_envelopes,
        )

    def create_hub(self, address: str, *, watermark: int | None = None,
                   breaker_threshold: int | None = None) -> None:
        self.mesh.create_hub(address, watermark=watermark, breaker_threshold=breaker_threshold)

    def post(
        self,
        sender: str,
        target: str,
        message: MessageSpec,
        *,
        identity: str | None = "user",
        route: Route = Route.MONOLITH,
    ) -> str:
        mesh = self.mesh
        if sender not in mesh.hubs:
            mesh.ensure_hub(sender)
        if message.message_class is _FAILURE:
            payload: Message = _failure_payload(mesh)
        else:
            # A payload whose handler must raise is the mesh's own FaultingRequest.
            type_name = FAULTING_REQUEST if message.handler_raises else message.type_name
            payload = new_message(type_name, message.message_class, message.diagnostic_key)
        delivery = fresh_delivery(f"d{next(mesh.delivery_ids)}", sender, target, payload,
                                  identity)
        if route is _DIRECT:
            # An existing target's intake is called straight away (what `post_direct` does
            # with it); a missing one goes through `post_direct` for its answer.
            hub = mesh.hubs.get(target)
            if hub is not None:
                hub.offer(delivery)
            else:
                mesh.post_direct(delivery)
        elif route is _GRAIN:
            mesh.post_routed(mesh.grain, delivery)
        else:
            mesh.post_routed(mesh.monolith, delivery)
        return delivery.id

    def subscribe(self, subscriber: str, target: str, *, retries: int = 5) -> str:
        return self.mesh.subscribe(subscriber, target, retries=retries)

    def inject(self, fault: Fault) -> None:
        mesh = self.mesh
        if fault.count < 0 or fault.duration_ms < 0:
            raise ValueError(f"fault {fault.kind.value}: count and duration_ms must be >= 0")
        mesh.note_fault(fault.kind.value, fault.target)
        if fault.kind is FaultKind.REJECT_NEXT:
            mesh.faults.arm_reject(fault.target, fault.count)
        elif fault.kind is FaultKind.TIMEOUT_NEXT:
            mesh.faults.arm_timeout(fault.target, fault.count)
        elif fault.kind is FaultKind.AGGREGATE_NEXT:
            mesh.faults.arm_aggregate(fault.target, fault.count, fault.timeout_first)
        elif fault.kind is FaultKind.REMOVE_TARGET:
            mesh.remove_hub(fault.target)
        elif fault.kind is FaultKind.BLOCK_HUB:
            mesh.block_hub(fault.target, fault.duration_ms)
        elif fault.kind is FaultKind.SLOW_DESTINATION:
            mesh.faults.set_slow(fault.target, fault.duration_ms)

    def advance(self, ms: int) -> None:
        if ms < 0:
            raise ValueError(f"advance: ms must be >= 0, got {ms}")
        scheduler = self.mesh.scheduler
        scheduler.run_until(scheduler.now + ms)

    def run_until_idle(self, limit_ms: int) -> bool:
        scheduler = self.mesh.scheduler
        deadline = scheduler.now + limit_ms
        if scheduler.run(deadline):
            return True
        scheduler.now = max(scheduler.now, deadline)
        return False

    def stop(self, *, graceful: bool = True) -> None:
        self.mesh.silo.stop(graceful=graceful)

    def cancel_stop_hold(self) -> None:
        """The host's own shutdown budget expired: release an Active-stage hold at once."""
        self.mesh.silo.quiescence.cancel()

    def now_ms(self) -> int:
        return self.mesh.scheduler.now

    def set_envelope_roundtrip(self, on: bool) -> None:
        self.mesh.roundtrip_envelopes = on

    def trace(self) -> Sequence[TraceEvent]:
        return self.mesh.trace.events()


def _failure_payload(mesh: Mesh) -> Message:
    """A FAILURE-class spec becomes a real DeliveryFailure (answering a request that is not
    part of the run), so payload-type code paths see what they would in production."""
    return DeliveryFailure.as_payload(mesh.new_id("x"), ErrorType.FAILED)


def make_adapter(chooser: Chooser) -> ReferenceAdapter:
    """The `AdapterFactory` of the reference mesh."""
    return ReferenceAdapter(chooser)
