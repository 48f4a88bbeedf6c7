"""INV7: one answer per request, read off the envelope (seed 004, issue #1485).

A delivery whose routing fails is answered through `report_failure`: a heartbeat (or any
can-be-ignored, lifecycle) payload or a DeliveryFailure is never answered, packaged or
not; an ordinary one is answered exactly once. Pre-fix, the guard read the payload type,
which is RawJson after packaging, so a departed owner's heartbeats were each answered:
3 NACKs at the sender where 1 is right.
"""

from __future__ import annotations

from invariants.checks.monitor import Monitor, check_function
from invariants.checks.params import DEFAULT_PARAMS, CheckParams
from invariants.checks.violation import Violation
from invariants.trace import EventKind, TraceEvent

# Events that say a delivery's routing failed, so report_failure must decide on an answer.
_ROUTING_FAILED = frozenset({EventKind.DISPATCH_REFUSED, EventKind.ANSWER_SUPPRESSED})


def _failed_leg(event: TraceEvent) -> bool:
    """A route leg that ended in failure (`reason` "failed", or an `error` stated)."""
    return event.leg_kind != "nack" and (event.reason == "failed" or event.error is not None)


class AnswerOnce(Monitor):
    check_id = "INV7"
    title = "one answer per request"

    def __init__(self, params: CheckParams = DEFAULT_PARAMS) -> None:
        super().__init__(params)
        self._posted: dict[str, TraceEvent] = {}  # delivery id -> first POSTED
        self._answers: dict[str, TraceEvent] = {}  # delivery id -> first FAILURE_EMITTED
        self._failed: dict[str, TraceEvent] = {}  # ordinary deliveries whose routing failed
        self._rejected: set[str] = set()
        self._stopped = False  # after the stop completed nothing is routed, nor answered

    def observe(self, event: TraceEvent) -> None:
        kind, did = event.kind, event.delivery_id
        if kind is EventKind.POSTED and did is not None:
            self._posted.setdefault(did, event)
        elif kind is EventKind.REJECTED and did is not None:
            self._rejected.add(did)  # terminal and unanswered: INV1's business
        elif kind is EventKind.FAILURE_EMITTED and event.answers is not None:
            self._observe_answer(event, event.answers)
        elif kind is EventKind.STOP_COMPLETED:
            self._stopped = True
        elif kind in _ROUTING_FAILED or (kind is EventKind.LEG_ENDED and _failed_leg(event)):
            if did is None or did in self._failed or self._stopped:
                return
            cls = self.facts.class_of(did)
            # An unknown class is held to the ordinary rule: the stricter reading.
            if cls is None or not cls.suppresses_answer:
                self._failed[did] = event

    def _observe_answer(self, event: TraceEvent, answered: str) -> None:
        first = self._answers.get(answered)
        if first is not None:
            self.flag(f"delivery {answered} answered more than once", first, event)
            return
        self._answers[answered] = event
        cls = self.facts.class_of(answered)
        if cls is not None and cls.suppresses_answer:
            posted = self._posted.get(answered)
            packaged = "packaged " if self.facts.packaged(answered) else ""
            shown = (posted, event) if posted is not None else (event,)
            self.flag(f"{packaged}{cls.value} delivery {answered} was answered (must never be)",
                      *shown)

    def unfinished(self) -> list[Violation]:
        return [
            self.violation(f"ordinary delivery {did} failed routing and was never answered", ev)
            for did, ev in self._failed.items()
            if did not in self._answers and did not in self._rejected
        ]


check = check_function(AnswerOnce)
