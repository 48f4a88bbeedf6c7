"""INV5's answers in flight: a NACK holds the stop like any leg, and its leg ends by landing.

A graceful stop holds at Active until every route leg and NACK leg has ended; a NACK leg
that ends without its answer getting anywhere would release the hold over an answer that
never landed (seed 001: a leg past its subscribe "completes silently — no NACK"). So a NACK
leg that ends while the graceful stop holds must have delivered its DeliveryFailure first:
offered at its sender's hub (`POSTED` with the NACK's delivery id) or, the sender gone,
reported where it could not be delivered (`ANSWER_SUPPRESSED` with that id: a failure to
deliver a failure is never answered). A leg cut off (a reason in `unlanded_reasons`) is
judged as a route leg is, by `StopHolds`.
"""

from __future__ import annotations

from invariants.checks.monitor import Monitor
from invariants.trace import EventKind, TraceEvent

NACK_LANDED = "NACK legs ended during the hold landed"

NACK = "nack"


class NacksInFlight:
    """The NACK legs in flight for `monitor`, and whether each one's answer arrived."""

    def __init__(self, monitor: Monitor) -> None:
        self._monitor = monitor
        self._open: dict[str, TraceEvent] = {}  # NACK delivery id -> its LEG_STARTED
        self._arrived: set[str] = set()  # NACK delivery ids offered or reported since

    def observe(self, event: TraceEvent, holding: bool) -> None:
        kind, did = event.kind, event.delivery_id
        if did is None:
            return
        if kind is EventKind.LEG_STARTED and event.leg_kind == NACK:
            self._open[did] = event
            self._arrived.discard(did)
        elif kind in (EventKind.POSTED, EventKind.ANSWER_SUPPRESSED) and did in self._open:
            self._arrived.add(did)
        elif kind is EventKind.LEG_ENDED and did in self._open:
            started = self._open.pop(did)
            arrived = did in self._arrived
            self._arrived.discard(did)
            if not holding or event.reason in self._monitor.params.unlanded_reasons:
                return
            if arrived:
                self._monitor.exercised(NACK_LANDED)
                return
            self._monitor.flag(
                f"NACK leg {event.leg_id} ended while the graceful stop held at Active, but "
                f"its answer {did} never reached {started.target or 'its sender'}: the hold "
                "was released over an answer that did not land",
                started,
                event,
            )
