"""What the trace says about each delivery, gathered as it goes.

Outcome events (SHED, DROPPED, ...) need not repeat the delivery's fields: the POSTED that
opened the same intake at the same hub states them. A delivery's message class is learnt
from any event that carries it, from FAILURE_EMITTED (its own delivery is a
DeliveryFailure), or from the driver that posted it (`declare`): a routed delivery that
never reaches a hub is seen by the trace only through its dispatch.
"""

from __future__ import annotations

from dataclasses import replace

from invariants.trace import EventKind, MessageClass, TraceEvent

_KEY_FIELDS = ("sender", "target", "message_type", "message_class", "diagnostic_key")


class DeliveryFacts:
    def __init__(self) -> None:
        self._posted_at: dict[str | None, TraceEvent] = {}  # hub -> its latest POSTED
        self._classes: dict[str, MessageClass] = {}
        self._packaged: set[str] = set()

    def observe(self, event: TraceEvent) -> None:
        did = event.delivery_id
        if event.kind is EventKind.POSTED:
            self._posted_at[event.hub] = event
        if did is None:
            return
        if event.kind is EventKind.FAILURE_EMITTED:
            self._classes[did] = MessageClass.FAILURE
        elif event.message_class is not None:
            self._classes.setdefault(did, event.message_class)
        if event.packaged:
            self._packaged.add(did)

    def declare(self, delivery_id: str, message_class: MessageClass) -> None:
        self._classes.setdefault(delivery_id, message_class)

    def class_of(self, delivery_id: str | None) -> MessageClass | None:
        return self._classes.get(delivery_id) if delivery_id is not None else None

    def packaged(self, delivery_id: str) -> bool:
        return delivery_id in self._packaged

    def complete(self, event: TraceEvent) -> TraceEvent:
        """`event` with the fields its intake's POSTED stated filled in where it left them out."""
        posted = self._posted_at.get(event.hub)
        if posted is None or posted.delivery_id != event.delivery_id or posted is event:
            return event
        missing = {
            name: getattr(posted, name)
            for name in _KEY_FIELDS
            if getattr(event, name) is None and getattr(posted, name) is not None
        }
        return replace(event, **missing) if missing else event
