"""INV1: rejection is terminal, never amplifying (seed 004, Invariant 1).

A post the identity guard rejects is logged once, never answered and never travels on, and
a DeliveryFailure is never itself answered by a DeliveryFailure (the ping-pong chain that
wedges an action block): the failure traffic is 0, not "fewer".

Obligations (docs/dynamic-invariants.md, INV1): "anonymous posts rejected once and
dropped", "failed DeliveryFailures left unanswered".
"""

from __future__ import annotations

from types import MappingProxyType

from invariants.adapter import Capability
from invariants.checks.monitor import Monitor, check_function
from invariants.checks.params import DEFAULT_PARAMS, CheckParams
from invariants.trace import EventKind, MessageClass, TraceEvent

# Events that mean a delivery is travelling or being worked on again.
_TRAFFIC = frozenset({
    EventKind.POSTED,
    EventKind.ENQUEUED,
    EventKind.HANDLED,
    EventKind.ATTEMPT,
    EventKind.CALL_RECEIVED,
    EventKind.LEG_STARTED,
})


REJECTED = "anonymous posts rejected once and dropped"
UNANSWERED = "failed DeliveryFailures left unanswered"


class RejectionTerminal(Monitor):
    check_id = "INV1"
    title = "rejection is terminal"
    reads_custom_events = False
    obligations = MappingProxyType({
        REJECTED: "no post the harness made without an identity was rejected (is the "
        "`anonymous` family on, and does the mesh emit REJECTED?)",
        UNANSWERED: "no DeliveryFailure failed its own routing (is the `failure` family "
        "on, posting to missing targets, and does the mesh emit ANSWER_SUPPRESSED?)",
    })

    def __init__(self, params: CheckParams = DEFAULT_PARAMS) -> None:
        super().__init__(params)
        self._rejected: dict[str, TraceEvent] = {}
        self._followups: dict[str, int] = {}
        self._timed_out: dict[str, int] = {}  # deliveries a caller's call of timed out: when
        self._excused: set[str] = set()  # rejected posts answered once, by the caller's timeout

    def observe(self, event: TraceEvent) -> None:
        kind, did = event.kind, event.delivery_id
        if kind is EventKind.ATTEMPT_FAILED and event.timed_out and did is not None:
            self._timed_out.setdefault(did, event.time_ms)
        if kind is EventKind.REJECTED and did is not None:
            first = self._rejected.get(did)
            if first is not None:
                self.flag(f"post {did} rejected more than once (must be logged once)", first, event)
            else:
                self._rejected[did] = event
                self._followups[did] = 0
                posted = self.harness.posted(did)
                if posted is not None and posted.identity is None:
                    self.exercised(REJECTED)
            return
        if kind is EventKind.ANSWER_SUPPRESSED and self.facts.class_of(did) is MessageClass.FAILURE:
            self.exercised(UNANSWERED)  # a DeliveryFailure whose own routing failed
        if kind is EventKind.ENQUEUED and did not in self._rejected:
            self._observe_admitted(event)
        if kind is EventKind.FAILURE_EMITTED:
            self._observe_failure(event)
            return
        if kind in _TRAFFIC and did is not None and did in self._rejected:
            count = self._followups[did] = self._followups[did] + 1
            if count > self.params.rejection_followups:
                self.flag(
                    f"rejected post {did} was not dropped: {kind.value} after its rejection",
                    self._rejected[did],
                    event,
                )

    def _observe_admitted(self, event: TraceEvent) -> None:
        posted = self.harness.posted(event.delivery_id)
        if (
            posted is not None
            and posted.identity is None
            and posted.message_class is not MessageClass.SYSTEM
            and event.hub == posted.target
        ):
            self.flag(
                f"the harness posted {posted.delivery_id} with no identity, yet {event.hub} "
                "enqueued it: the identity guard let it through",
                event,
            )

    def _observe_failure(self, event: TraceEvent) -> None:
        answered = event.answers
        if answered is None:
            return
        rejected = self._rejected.get(answered)
        if rejected is not None:
            if answered not in self._excused and self._callers_own_timeout(answered, rejected,
                                                                              event):
                self._excused.add(answered)  # one answer is the caller's timeout; no second
            else:
                self.flag(
                    f"DeliveryFailure answers rejected post {answered} (a rejection has no "
                    "reply)",
                    rejected,
                    event,
                )
        if self.facts.class_of(answered) is MessageClass.FAILURE:
            self.flag(
                f"DeliveryFailure answers DeliveryFailure {answered} (amplification chain)",
                event,
            )


    def _callers_own_timeout(self, answered: str, rejected: TraceEvent,
                             failure: TraceEvent) -> bool:
        """The caller never heard of the rejection, and answers its own timeout, as any
        timed-out call is, where its call was rejected no sooner than it timed out (a
        destination the harness slowed lands it in the timeout's instant) or, on a
        simulated network, at any time (its verdicts may hold the callee's word past the
        timeout). A grain call says it timed out (`ATTEMPT_FAILED` with `timed_out`,
        before the answer). On a simulated network a post on another route makes no call
        events, so its answer is the caller's timeout when it comes a response timeout or
        more after the harness posted it (no reply to the rejection can come later than
        the caller's own timeout)."""
        networked = Capability.NETWORK in self.capabilities
        timed_out = self._timed_out.get(answered)
        if timed_out is not None:
            return networked or rejected.time_ms >= timed_out
        if not networked:
            return False
        posted = self.harness.posted(answered)
        return (posted is not None
                and failure.time_ms - posted.time_ms >= self.params.response_timeout_ms)


check = check_function(RejectionTerminal)
