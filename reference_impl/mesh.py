"""The composition root: one silo's hubs, routers, routing pool, ledger, faults and trace,
all driven by one virtual-time scheduler."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable

from invariants.adapter import Chooser
from invariants.trace import EventKind
from reference_impl.answers import AnswerLedger
from reference_impl.breaker import AggregateWatermark, StormBreaker
from reference_impl.constants import DEFAULT_AGGREGATE_WATERMARK, DELIVERY_RETRIES
from reference_impl.envelope import Delivery
from reference_impl.faults import FaultBook
from reference_impl.grain import Activations, GrainRouter
from reference_impl.hub import Hub, report_failure
from reference_impl.lifecycle import Silo
from reference_impl.messages import (
    DELIVERY_FAILURE,
    SUBSCRIBE_REQUEST,
    SUBSCRIBE_RESPONSE,
    DeliveryFailure,
    ErrorType,
    Message,
)
from reference_impl.pool import RoutingPool
from reference_impl.routing import MonolithRouter, Router
from reference_impl.scheduler import Scheduler
from reference_impl.subscribe import BoundedSubscription
from reference_impl.tracing import TraceRecorder

FAULTING_REQUEST = "FaultingRequest"  # its handler raises: the pump must go on


class HandlerFault(RuntimeError):
    """Raised by the handler of a FaultingRequest."""


class Mesh:
    """A deterministic, virtual-time mesh. Every choice comes from `chooser`."""

    def __init__(
        self,
        chooser: Chooser | None = None,
        *,
        record_trace: bool = True,
        delivery_retries: int = DELIVERY_RETRIES,
        default_watermark: int = DEFAULT_AGGREGATE_WATERMARK,
        roundtrip_envelopes: bool = False,
    ) -> None:
        self.scheduler = Scheduler(chooser)
        self.trace = TraceRecorder(self.scheduler, enabled=record_trace)
        self.default_watermark = default_watermark
        self.roundtrip_envelopes = roundtrip_envelopes
        self.hubs: dict[str, Hub] = {}
        self._implicit_hubs: set[str] = set()  # created on first use by a sender
        self.pool = RoutingPool(self.scheduler, self.trace)
        self.answers = AnswerLedger(self)
        self.faults = FaultBook()
        self.activations = Activations(self)
        self.monolith = MonolithRouter(self)
        self.grain = GrainRouter(self, retries=delivery_retries)
        self.silo = Silo(self)
        self.subscriptions: dict[str, BoundedSubscription] = {}
        self.pending_requests: dict[str, BoundedSubscription] = {}
        self._ids: dict[str, itertools.count[int]] = {}
        # The delivery ids' counter (what `new_id("d")` numbers with), read on every post.
        self.delivery_ids = self.id_counter("d")
        self._handlers: dict[str, Callable[[Hub, Delivery], None]] = {
            DELIVERY_FAILURE: self._on_failure,
            SUBSCRIBE_REQUEST: self._on_subscribe_request,
            SUBSCRIBE_RESPONSE: self._on_subscribe_response,
            FAULTING_REQUEST: self._on_faulting_request,
        }

    def new_id(self, prefix: str) -> str:
        # One counter per prefix: a single `next` instead of a lookup, an add and a store.
        counter = self._ids.get(prefix)
        if counter is None:
            counter = self.id_counter(prefix)
        return f"{prefix}{next(counter)}"

    def id_counter(self, prefix: str) -> itertools.count[int]:
        """The counter `new_id(prefix)` numbers with (ids `prefix1`, `prefix2`, ...)."""
        counter = self._ids.get(prefix)
        if counter is None:
            counter = self._ids[prefix] = itertools.count(1)
        return counter

    # Hubs -------------------------------------------------------------------------------

    def create_hub(self, address: str, *, watermark: int | None = None,
                   breaker_threshold: int | None = None) -> Hub:
        """A hub at `address`; `watermark` and `breaker_threshold` override the mesh's
        aggregate shed watermark and its per-key storm threshold there."""
        if not address:
            raise ValueError("hub address must be a non-empty string")
        level = self.default_watermark if watermark is None else watermark
        breaker = StormBreaker() if breaker_threshold is None else StormBreaker(
            threshold=breaker_threshold)
        existing = self.hubs.get(address)
        if existing is not None:
            if address not in self._implicit_hubs:
                raise ValueError(f"hub {address!r} already exists")
            # A sender's hub made on first use is claimed: it takes the stated watermark.
            claimed = AggregateWatermark(level)  # validates the level
            claimed.shed_count = existing.watermark.shed_count
            existing.watermark = claimed
            existing.breaker = breaker
            self._implicit_hubs.discard(address)
            self.trace.emit(EventKind.HUB_CREATED, hub=address, watermark=level)
            return existing
        hub = Hub(self, address, AggregateWatermark(level), breaker)
        self.hubs[address] = hub
        self.trace.emit(EventKind.HUB_CREATED, hub=address, watermark=level)
        return hub

    def ensure_hub(self, address: str) -> Hub:
        """The sender side: a poster's own hub is created on first use."""
        hub = self.hubs.get(address)
        if hub is None:
            hub = self.create_hub(address)
            self._implicit_hubs.add(address)
        return hub

    def remove_hub(self, address: str) -> None:
        hub = self.hubs.pop(address, None)
        self._implicit_hubs.discard(address)
        if hub is not None:
            hub.removed = True
            hub.queue.clear()

    def nearest_live_ancestor(self, address: str) -> str:
        """Hierarchical routing: the deepest existing hub above `address`, else the router."""
        parts = address.split("/")
        for end in range(len(parts) - 1, 0, -1):
            prefix = "/".join(parts[:end])
            if prefix in self.hubs:
                return prefix
        return self.monolith.name

    # Posting ----------------------------------------------------------------------------

    def post_direct(self, delivery: Delivery) -> None:
        """Straight onto the target hub's intake (no router, not packaged)."""
        hub = self.hubs.get(delivery.target)
        if hub is None:
            report_failure(self, delivery.sender, delivery, ErrorType.NOT_FOUND)
            return
        hub.offer(delivery)

    def post_routed(self, router: Router, delivery: Delivery) -> None:
        packaged = delivery.package()
        if self.roundtrip_envelopes:
            packaged = Delivery.from_json(json.loads(json.dumps(packaged.to_json())))
        router.dispatch(packaged)

    def subscribe(self, subscriber: str, target: str, *, retries: int) -> str:
        self.ensure_hub(subscriber)
        subscription = BoundedSubscription(self, self.new_id("s"), subscriber, target,
                                           retries=retries)
        self.subscriptions[subscription.id] = subscription
        subscription.start()
        return subscription.id

    # Handlers ---------------------------------------------------------------------------

    def _on_failure(self, hub: Hub, delivery: Delivery) -> None:
        failure = delivery.unpacked_message()
        if isinstance(failure, DeliveryFailure):
            waiting = self.pending_requests.pop(failure.answers, None)
            if waiting is not None:
                waiting.on_failure(failure.answers, failure.error)

    def _on_subscribe_request(self, hub: Hub, delivery: Delivery) -> None:
        response = Delivery(self.new_id("d"), hub.address, delivery.sender,
                            Message(SUBSCRIBE_RESPONSE, reply_to=delivery.id),
                            identity="system")
        self.post_routed(self.monolith, response)

    def _on_subscribe_response(self, hub: Hub, delivery: Delivery) -> None:
        reply_to = delivery.unpacked_message().reply_to
        waiting = self.pending_requests.pop(reply_to, None) if reply_to else None
        if waiting is not None and reply_to is not None:
            waiting.on_answer(reply_to)

    def _on_faulting_request(self, hub: Hub, delivery: Delivery) -> None:
        raise HandlerFault(f"handler of {delivery.id} at {hub.address} failed")

    # Faults -----------------------------------------------------------------------------

    def block_hub(self, address: str, duration_ms: int) -> None:
        """Hold a hub's turn; a hub that does not exist is not created by it."""
        hub = self.hubs.get(address)
        if hub is not None:
            hub.block(duration_ms)

    def note_fault(self, kind: str, target: str) -> None:
        self.trace.emit(EventKind.FAULT_INJECTED, reason=kind, target=target)

