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
# Read for every event: module constants, not slow attribute lookups on the enum classes.
_POSTED, _FAILURE_EMITTED, _FAILURE = (
    EventKind.POSTED, EventKind.FAILURE_EMITTED, MessageClass.FAILURE
)


class DeliveryFacts:
    def __init__(self) -> None:
        self._posted_at: dict[str | None, TraceEvent] = {}  # hub -> its latest POSTED
        self._classes: dict[str, MessageClass] = {}
        self._packaged: set[str] = set()

    def observe(self, event: TraceEvent) -> None:
        did = event.delivery_id
        kind = event.kind
        if kind is _POSTED:
            self._posted_at[event.hub] = event
        if did is None:
            return
        if kind is _FAILURE_EMITTED:
            self._classes[did] = _FAILURE
        else:
            message_class = event.message_class
            if message_class is not None:
                self._classes.setdefault(did, message_class)
        if event.packaged:
            self._packaged.add(did)

    def declare(self, delivery_id: str, message_class: MessageClass) -> None:
        self._classes.setdefault(delivery_id, message_class)

    def class_of(self, delivery_id: str | None) -> MessageClass | None:
        return self._classes.get(delivery_id) if delivery_id is not None else None

    def packaged(self, delivery_id: str) -> bool:
        return delivery_id in self._packaged

    def _opened_by(self, event: TraceEvent) -> TraceEvent | None:
        """The POSTED that opened `event`'s intake at its hub, where that is another event."""
        posted = self._posted_at.get(event.hub)
        if posted is None or posted.delivery_id != event.delivery_id or posted is event:
            return None
        return posted

    def stated_class(self, event: TraceEvent) -> MessageClass | None:
        """`complete(event).message_class`, without building the completed event."""
        if event.message_class is not None:
            return event.message_class
        posted = self._opened_by(event)
        return posted.message_class if posted is not None else None

    def complete(self, event: TraceEvent) -> TraceEvent:
        """`event` with the fields its intake's POSTED stated filled in where it left them out."""
        posted = self._opened_by(event)
        if posted is None:
            return event
        missing = {
            name: getattr(posted, name)
            for name in _KEY_FIELDS
            if getattr(event, name) is None and getattr(posted, name) is not None
        }
        return replace(event, **missing) if missing else event
