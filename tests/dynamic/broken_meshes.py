"""Deliberately broken reference meshes: each breaks one invariant, for negative controls.

Each is a `ReferenceAdapter` whose mesh has one part swapped for its pre-fix shape (the
seeds' "reverted only the gate expression" controls), patched on the instance so the
reference itself stays untouched.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from invariants.adapter import Chooser, MessageSpec, Route
from invariants.trace import EventKind, MessageClass
from reference_impl.adapter import ReferenceAdapter
from reference_impl.breaker import StormBreaker
from reference_impl.constants import STAGE_ACTIVE, retry_delay_ms
from reference_impl.envelope import Delivery
from reference_impl.grain import GrainDeliveryOperation, GrainRouter
from reference_impl.hub import Intake
from reference_impl.ladder import classify, is_timeout, is_transient
from reference_impl.messages import DeliveryFailure, ErrorType
from reference_impl.pool import LegHandle, LegOperation
from reference_impl.routing import Router


class AnswersRejections(ReferenceAdapter):
    """INV1: the identity guard NACKs the post it rejected (the rejection amplifies)."""

    def create_hub(self, address: str, *, watermark: int | None = None) -> None:
        super().create_hub(address, watermark=watermark)
        hub = self.mesh.hubs[address]
        offer = hub.offer

        def answering_offer(delivery: Delivery) -> Intake:
            outcome = offer(delivery)
            if outcome is Intake.REJECTED:
                self.mesh.answers.send(delivery, DeliveryFailure(delivery.id, ErrorType.REJECTED),
                                       hub=address, local=True)
            return outcome

        hub.offer = answering_offer  # type: ignore[method-assign]


class UnboundedResubscribe(ReferenceAdapter):
    """INV2: the subscribe primitive retries a missing target (practically) forever."""

    def subscribe(self, subscriber: str, target: str, *, retries: int = 5) -> str:
        return super().subscribe(subscriber, target, retries=1_000_000)


class NoWatermark(ReferenceAdapter):
    """INV3: only the per-key breaker; the aggregate watermark never sheds."""

    def create_hub(self, address: str, *, watermark: int | None = None) -> None:
        super().create_hub(address, watermark=watermark)
        self.mesh.hubs[address].watermark.watermark = 10**9


class _ResendsTimeouts(GrainDeliveryOperation):
    def _failed(self, leg: LegHandle, attempt: int, exc: Exception) -> None:
        self.waiting_attempt = -1
        mesh = self.router.mesh
        mesh.trace.emit(EventKind.ATTEMPT_FAILED, hub=self.router.name,
                        delivery_id=self.delivery.id, attempt=attempt,
                        error=type(exc).__name__, timed_out=is_timeout(exc))
        if is_transient(exc) and attempt < self.router.retries:  # pre-fix: admits timeouts
            leg.schedule(retry_delay_ms(attempt), self.deliver, leg, attempt + 1)
            return
        self.router.answer_failure(self.delivery, classify(exc))
        leg.end("failed")


class _PreFixGrainRouter(GrainRouter):
    def operation(self, delivery: Delivery) -> LegOperation:
        return _ResendsTimeouts(self, delivery)


class ResendsTimeouts(ReferenceAdapter):
    """INV4: the delivery retry gates on is_transient, so a timed-out call is re-sent."""

    def __init__(self, chooser: Chooser | None = None) -> None:
        super().__init__(chooser)
        self.mesh.grain = _PreFixGrainRouter(self.mesh, retries=self.mesh.grain.retries)


class NoStopHold(ReferenceAdapter):
    """INV5: the Active-stage participant returns at once, holding nothing."""

    def __init__(self, chooser: Chooser | None = None) -> None:
        super().__init__(chooser)
        participants: dict[int, Callable[[Callable[[], None]], None]] = (
            self.mesh.silo._participants
        )
        participants[STAGE_ACTIVE] = lambda done: done()


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
    """INV6: the breaker keys on (sender, target, type): a wide fan-out looks like a loop."""

    def create_hub(self, address: str, *, watermark: int | None = None) -> None:
        super().create_hub(address, watermark=watermark)
        self.mesh.hubs[address].breaker = _TupleKeyBreaker()

    def post(self, sender: str, target: str, message: MessageSpec, *,
             identity: str | None = "user", route: Route = Route.MONOLITH) -> str:
        self.mesh.ensure_hub(sender)
        hub = self.mesh.hubs[sender]
        if not isinstance(hub.breaker, _TupleKeyBreaker):
            hub.breaker = _TupleKeyBreaker()
        return super().post(sender, target, message, identity=identity, route=route)


def _payload_type_guard(router: Router) -> None:
    """The pre-fix guard: read the payload's type, which is RawJson after packaging."""

    def answer_failure(delivery: Delivery, error: ErrorType, *, local: bool = False,
                       hub: str | None = None) -> None:
        if delivery.message.suppresses_answer():  # never true of RawJson
            return
        router.mesh.answers.send(delivery, DeliveryFailure(delivery.id, error),
                                 hub=hub or router.name, local=local)

    router.answer_failure = answer_failure  # type: ignore[method-assign]


class PayloadTypeGuard(ReferenceAdapter):
    """INV7: the routers' answer guard tests the payload type instead of may_answer()."""

    def __init__(self, chooser: Chooser | None = None) -> None:
        super().__init__(chooser)
        _payload_type_guard(self.mesh.monolith)
        _payload_type_guard(self.mesh.grain)


class AnswersFailures(ReferenceAdapter):
    """INV1: the routers answer a DeliveryFailure that fails routing (the ping-pong)."""

    def __init__(self, chooser: Chooser | None = None) -> None:
        super().__init__(chooser)
        for router in (self.mesh.monolith, self.mesh.grain):
            _answer_failures(router)


def _answer_failures(router: Router) -> None:
    guarded = router.answer_failure

    def answer_failure(delivery: Delivery, error: ErrorType, *, local: bool = False,
                       hub: str | None = None) -> None:
        if delivery.message_class is MessageClass.FAILURE:
            router.mesh.answers.send(delivery, DeliveryFailure(delivery.id, error),
                                     hub=hub or router.name, local=local)
            return
        guarded(delivery, error, local=local, hub=hub)

    router.answer_failure = answer_failure  # type: ignore[method-assign]


class NeverRetries(ReferenceAdapter):
    """INV4, the other side: the retry was simply disabled, so a rejection is not re-sent."""

    def __init__(self, chooser: Chooser | None = None) -> None:
        super().__init__(chooser, delivery_retries=0)


class ShedsUserMessages(ReferenceAdapter):
    """INV3: past the watermark everything is shed, user-facing messages included."""

    def create_hub(self, address: str, *, watermark: int | None = None) -> None:
        super().create_hub(address, watermark=watermark)
        policy = self.mesh.hubs[address].watermark

        def should_shed(message_class: MessageClass, depth: int) -> bool:
            return depth >= policy.watermark

        policy.should_shed = should_shed  # type: ignore[method-assign]


class DetachedNack(ReferenceAdapter):
    """INV5: a NACK subscribed outside the routing pool: uncounted, so the stop does not
    wait for it and it lands after the silo stopped."""

    def __init__(self, chooser: Chooser | None = None) -> None:
        super().__init__(chooser)
        scheduler = self.mesh.scheduler

        def send_nack(nack: LegOperation) -> LegHandle:
            return nack.subscribe(scheduler)

        self.mesh.answers.send_nack = send_nack  # type: ignore[method-assign,assignment]


class HoldsNonGraceful(ReferenceAdapter):
    """INV5: a non-graceful stop (token already cancelled) still holds at Active."""

    def __init__(self, chooser: Chooser | None = None) -> None:
        super().__init__(chooser)
        self.mesh.silo._participants[STAGE_ACTIVE] = self.mesh.silo.quiescence.hold_until_drained


class NeverAnswers(ReferenceAdapter):
    """INV7: the routers answer nothing, not even an ordinary delivery they failed."""

    def __init__(self, chooser: Chooser | None = None) -> None:
        super().__init__(chooser)
        for router in (self.mesh.monolith, self.mesh.grain):
            router.answer_failure = _silent  # type: ignore[method-assign]


def _silent(delivery: Delivery, error: ErrorType, *, local: bool = False,
            hub: str | None = None) -> None:
    return None


BROKEN: dict[str, type[ReferenceAdapter]] = {
    "INV1": AnswersRejections,
    "INV2": UnboundedResubscribe,
    "INV3": NoWatermark,
    "INV4": ResendsTimeouts,
    "INV5": NoStopHold,
    "INV6": KeyWithoutIdentity,
    "INV7": PayloadTypeGuard,
}

# Further controls: the other half of a check (e.g. INV4's "a rejection is still re-sent")
# or a second shape of the same defect (INV5's detached NACK, mutant M7's shape).
MORE_BROKEN: list[tuple[str, type[ReferenceAdapter]]] = [
    ("INV1", AnswersFailures),
    ("INV3", ShedsUserMessages),
    ("INV4", NeverRetries),
    ("INV5", DetachedNack),
    ("INV5", HoldsNonGraceful),
    ("INV7", NeverAnswers),
]
