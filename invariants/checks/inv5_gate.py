"""INV5's teardown gate: once a hub's gate has closed, no application message gets past it.

The stop closes every hub's teardown gate (the reference at RuntimeServices, seed 001's
`messageCenter.BlockApplicationMessages()`), and from then on an application message
(user-facing or can-be-ignored traffic) offered at that hub is refused, never queued for
its handler. A hub's gate is known closed from the first `GATED` there while the stop runs,
and every gate is closed once the stop has completed (every hub that existed before the
stop began; one made since, a sender's hub on first use, has no gate of the stop's to
close). What was queued before the gate closed may still be handled: the gate refuses
intake, it does not empty a queue.

Lifecycle, system and DeliveryFailure traffic is exempt: it is what takes a hub down and
answers what the stop refused, and a mesh may let it through its closed gate (Orleans'
`BlockApplicationMessages` blocks application messages only). The reference's gate refuses
everything, which is stricter and never wrong.
"""

from __future__ import annotations

from invariants.checks.monitor import Monitor
from invariants.trace import EventKind, MessageClass, TraceEvent

GATE = "application messages offered at a closed teardown gate refused"

_APPLICATION = frozenset({MessageClass.USER, MessageClass.IGNORABLE})


class TeardownGate:
    """Where each hub's gate is known closed, and what `monitor` saw offered there since."""

    def __init__(self, monitor: Monitor) -> None:
        self._monitor = monitor
        self._closed: dict[str, TraceEvent] = {}  # hub -> the event that shows it closed
        self._completed: TraceEvent | None = None  # every gate closed from here on
        self._since_stop: set[str] = set()  # hubs created once the stop had begun
        # Application deliveries offered at a closed gate: delivery id -> (POSTED, closure).
        self._offered: dict[str, tuple[TraceEvent, TraceEvent]] = {}

    def _closure(self, hub: str | None) -> TraceEvent | None:
        """The event that shows `hub`'s gate closed, or None while it may be open."""
        if hub is None:
            return None
        closed = self._closed.get(hub)
        if closed is not None:
            return closed
        if self._completed is not None and hub not in self._since_stop:
            return self._completed
        return None

    def _application(self, event: TraceEvent) -> bool:
        message_class = self._monitor.facts.class_of(event.delivery_id) or event.message_class
        return message_class in _APPLICATION

    def observe(self, event: TraceEvent, stopping: bool) -> None:
        kind, hub, did = event.kind, event.hub, event.delivery_id
        if kind is EventKind.HUB_CREATED and hub is not None and stopping:
            self._since_stop.add(hub)
        elif kind is EventKind.STOP_COMPLETED and self._completed is None:
            self._completed = event
        elif kind is EventKind.GATED and hub is not None and did is not None:
            self._offered.pop(did, None)
            if stopping:
                self._closed.setdefault(hub, event)
                if self._application(event):
                    self._monitor.exercised(GATE)
        elif kind is EventKind.POSTED and did is not None and self._application(event):
            closure = self._closure(hub)
            if closure is not None:
                self._offered[did] = (event, closure)
        elif kind in (EventKind.ENQUEUED, EventKind.HANDLED) and did is not None:
            offered = self._offered.pop(did, None)
            if offered is not None:
                posted, closure = offered
                why = (
                    "the stop completed" if closure.kind is EventKind.STOP_COMPLETED
                    else f"it gated {closure.delivery_id}"
                )
                self._monitor.flag(
                    f"application message {did} {kind.value} at {hub} after its teardown "
                    f"gate closed ({why} at {closure.time_ms} ms): a closed gate refuses it",
                    closure,
                    posted,
                    event,
                )
        elif kind in (EventKind.REJECTED, EventKind.DROPPED, EventKind.SHED) and did is not None:
            self._offered.pop(did, None)
