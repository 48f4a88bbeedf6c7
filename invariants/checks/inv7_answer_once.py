"""INV7: one answer per request, read off the envelope (seed 004, issue #1485).

A delivery whose routing fails is answered through `report_failure`: a heartbeat (or any
can-be-ignored, lifecycle) payload or a DeliveryFailure is never answered, packaged or
not; an ordinary one is answered exactly once. Pre-fix, the guard read the payload type,
which is RawJson after packaging, so a departed owner's heartbeats were each answered:
3 NACKs at the sender where 1 is right.
"""

from __future__ import annotations

from collections.abc import Sequence

from invariants.checks.monitor import Monitor, run_monitor
from invariants.checks.params import DEFAULT_PARAMS, CheckParams
from invariants.checks.violation import Violation
from invariants.trace import EventKind, MessageClass, TraceEvent

# Events that say a delivery's routing failed, so report_failure must decide on an answer.
_ROUTING_FAILED = frozenset({EventKind.DISPATCH_REFUSED, EventKind.ANSWER_SUPPRESSED})


class AnswerOnce(Monitor):
    check_id = "INV7"
    title = "one answer per request"

    def __init__(self, params: CheckParams = DEFAULT_PARAMS) -> None:
        super().__init__(params)
        self._posted: dict[str, TraceEvent] = {}  # delivery id -> first POSTED (its class)
        self._answers: dict[str, TraceEvent] = {}  # delivery id -> first FAILURE_EMITTED
        self._failed: dict[str, TraceEvent] = {}  # ordinary deliveries whose routing failed
        self._rejected: set[str] = set()

    def _class_of(self, delivery_id: str) -> MessageClass | None:
        posted = self._posted.get(delivery_id)
        return posted.message_class if posted is not None else None

    def observe(self, event: TraceEvent) -> None:
        kind, did = event.kind, event.delivery_id
        if kind is EventKind.POSTED and did is not None:
            self._posted.setdefault(did, event)
        elif kind is EventKind.REJECTED and did is not None:
            self._rejected.add(did)  # terminal and unanswered: INV1's business
        elif kind is EventKind.FAILURE_EMITTED and event.answers is not None:
            self._observe_answer(event, event.answers)
        elif kind in _ROUTING_FAILED or (kind is EventKind.LEG_ENDED and event.error):
            if did is None or did in self._failed:
                return
            cls = event.message_class or self._class_of(did)
            if cls is not None and not cls.suppresses_answer:
                self._failed[did] = event

    def _observe_answer(self, event: TraceEvent, answered: str) -> None:
        first = self._answers.get(answered)
        if first is not None:
            self.flag(f"delivery {answered} answered more than once", first, event)
            return
        self._answers[answered] = event
        cls = self._class_of(answered)
        if cls is not None and cls.suppresses_answer:
            posted = self._posted[answered]
            packaged = "packaged " if posted.packaged else ""
            self.flag(
                f"{packaged}{cls.value} delivery {answered} ({posted.message_type}) was answered "
                "(must never be)",
                posted,
                event,
            )

    def unfinished(self) -> list[Violation]:
        return [
            self.violation(f"ordinary delivery {did} failed routing and was never answered", ev)
            for did, ev in self._failed.items()
            if did not in self._answers and did not in self._rejected
        ]


def check(
    trace: Sequence[TraceEvent],
    params: CheckParams = DEFAULT_PARAMS,
    *,
    now_ms: int | None = None,
    final: bool = False,
) -> list[Violation]:
    return run_monitor(AnswerOnce(params), trace, now_ms=now_ms, final=final)
