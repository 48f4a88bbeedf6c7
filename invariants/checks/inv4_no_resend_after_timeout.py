"""INV4: a delivery the callee is still holding is never re-sent (seed 000).

A call that timed out was accepted and will still run, so it is not sent again; a rejected
one is held by nobody, so it is re-sent after its backoff until its budget is spent. Whether
a call timed out or was rejected is the harness's fact (the faults it armed, the caller's
clock), not the mesh's say-so (`_truth`).

Obligations (docs/dynamic-invariants.md, INV4): "timed-out deliveries sent once", "rejected
deliveries re-sent to the budget", "retry delays timed", "aggregates (timeout first) sent
once", "aggregates (rejection first) sent once", "timed-out deliveries answered as
terminal", "delivery effects applied at most once" (at-least-once adapters) and, per kind
of call fault, "<kind> faults honoured" (judged in `inv4_faults`). The harness facts it
judges from: "Verdicts carry their evidence", same doc.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

from invariants.adapter import Capability, FaultKind
from invariants.checks.harness_facts import HarnessFact, Injected
from invariants.checks.inv4_calls import Delivery
from invariants.checks.inv4_faults import (
    CALL_TIMEOUTS,
    HONOURED,
    IGNORED,
    CallFaults,
    ignored_and_honoured,
)
from invariants.checks.monitor import Monitor, check_function
from invariants.checks.params import DEFAULT_PARAMS, CheckParams
from invariants.checks.violation import Violation
from invariants.trace import EventKind, TraceEvent

SENT_ONCE = "timed-out deliveries sent once"
TO_BUDGET = "rejected deliveries re-sent to the budget"
DELAYS = "retry delays timed"
# A timeout anywhere in an aggregate error is a timeout, whichever member comes first (seed
# 000's `ATimeoutCarriedInsideAnAggregate_IsAlsoNotResent`).
AGGREGATE_TIMEOUT_FIRST = "aggregates (timeout first) sent once"
AGGREGATE_REJECTION_FIRST = "aggregates (rejection first) sent once"
APPLIED_ONCE = "delivery effects applied at most once"
# A timeout is answered with a terminal error: telling the sender "transient" arms a
# resubscribe against a plausibly wedged target (seed 000, ClassifyDeliveryException).
TERMINAL = "timed-out deliveries answered as terminal"
# The error names that tell a sender to keep recovering (the reference's and the seeds').
TRANSIENT_ERRORS = frozenset({"ShuttingDown", "Unavailable"})

# Every INV4 obligation is importable from here, the fault ones judged in `inv4_faults`.
__all__ = [
    "AGGREGATE_REJECTION_FIRST",
    "AGGREGATE_TIMEOUT_FIRST",
    "APPLIED_ONCE",
    "DELAYS",
    "HONOURED",
    "IGNORED",
    "SENT_ONCE",
    "TERMINAL",
    "TO_BUDGET",
    "NoResendAfterTimeout",
    "check",
]


class _Retries:
    """The retry schedule of rejected deliveries, judged for `monitor`: each re-sent its
    backoff after the failure it answers, neither earlier nor later, until its budget is
    spent, and never attempted more."""

    def __init__(self, monitor: Monitor) -> None:
        self._monitor = monitor
        self._owing: dict[str, Delivery] = {}  # deliveries whose last failure owes a retry
        self.stopped_at: int | None = None  # nothing is retried once the stop completed

    def sent(self, d: Delivery, did: str, event: TraceEvent) -> None:
        """`d` attempted (again): within its budget, and not before its backoff."""
        monitor, params = self._monitor, self._monitor.params
        limit = params.delivery_retries + 1
        if d.attempts == limit + 1:
            monitor.flag(f"delivery {did} attempted more than {limit} times", d.first, event)
        failure = d.last_failure
        if failure is not None and d.attempts > 1:
            wait = params.retry_delay_ms(d.attempts - 1)
            if d.resendable:
                monitor.exercised(DELAYS)
            if event.time_ms - failure.time_ms < wait:
                monitor.flag(
                    f"delivery {did} retry {d.attempts - 1} after "
                    f"{event.time_ms - failure.time_ms} ms (backoff {wait} ms)",
                    failure,
                    event,
                )
        d.settled()
        self._owing.pop(did, None)

    def failed(self, d: Delivery, did: str) -> None:
        if d.resendable:
            self._owing[did] = d

    def ended(self, d: Delivery, did: str, event: TraceEvent, failure: TraceEvent | None
              ) -> None:
        """`d`'s leg ended or its sender was answered with `failure` still owed a retry."""
        d.settled()
        self._owing.pop(did, None)
        if failure is None or event.reason == "drained":
            return
        self._monitor.flag(
            f"rejected delivery {did} given up after {d.attempts} attempt(s) "
            f"(budget of {self._monitor.params.delivery_retries} retries not spent)",
            failure,
            event,
        )

    def crashed(self) -> None:
        """The retries owed when the harness crashed a node are owed no more (one refused
        again later is owed its retry again)."""
        self._owing.clear()

    def overdue(self, now_ms: int, owes_retry: Callable[[Delivery], TraceEvent | None]
                ) -> list[Violation]:
        params = self._monitor.params
        found: list[Violation] = []
        for did, d in self._owing.items():
            failure = owes_retry(d)
            if failure is None:
                continue
            due = failure.time_ms + params.retry_delay_ms(d.attempts)
            if self.stopped_at is not None and self.stopped_at <= due:
                continue
            if now_ms > due:
                found.append(
                    self._monitor.violation(
                        f"rejected delivery {did} not re-sent after attempt {d.attempts} "
                        f"within its backoff of {params.retry_delay_ms(d.attempts)} ms "
                        f"(budget of {params.delivery_retries} retries not spent)",
                        failure,
                    )
                )
        return found


class NoResendAfterTimeout(Monitor):
    check_id = "INV4"
    title = "a timed-out delivery is never re-sent"
    reads_custom_events = False
    obligations = MappingProxyType({
        SENT_ONCE: "no grain call timed out: no timeout_next the harness armed reached a grain "
        "delivery (is the INV4 plan's `timeout` family on, and does the adapter honour "
        "TIMEOUT_NEXT?)",
        TO_BUDGET: "no delivery was rejected on every call until its retry budget was spent: "
        "a reject_next with a count of at least delivery_retries + 1 never met a grain "
        "delivery (does the adapter honour REJECT_NEXT, and is delivery_retries its budget?)",
        DELAYS: "no rejected attempt was re-sent: the mesh never retried a rejection (are "
        "its rejection errors named in resendable_errors, and does REJECT_NEXT fire?)",
        AGGREGATE_TIMEOUT_FIRST: "no aggregate_next with the timeout first met a grain "
        "delivery (is the INV4 plan's `aggregate` family on?)",
        AGGREGATE_REJECTION_FIRST: "no aggregate_next with the rejection first met a grain "
        "delivery (is the INV4 plan's `aggregate` family on?)",
        HONOURED[FaultKind.REJECT_NEXT]: "no reject_next the harness armed was spent by a grain "
        "call that then failed as armed (does the adapter honour reject_next?)",
        HONOURED[FaultKind.TIMEOUT_NEXT]: "no timeout_next the harness armed was spent by a grain "
        "call that then failed as armed (does the adapter honour timeout_next?)",
        HONOURED[FaultKind.AGGREGATE_NEXT]: "no aggregate_next the harness armed was spent "
        "by a grain call that then failed as armed (does the adapter honour it?)",
        TERMINAL: "no delivery whose call timed out was answered (were any posted from a "
        "sender the mesh answers, and does the adapter emit FAILURE_EMITTED with `answers`?)",
        APPLIED_ONCE: "no grain delivery reached the callee twice: no timeout_next the "
        "harness armed was followed by a re-send (is the INV4 plan's `timeout` family on, "
        "and does the at-least-once mesh re-send a timed-out call?)",
    })

    def __init__(self, params: CheckParams = DEFAULT_PARAMS) -> None:
        super().__init__(params)
        self._deliveries: dict[str, Delivery] = {}
        self._faults = CallFaults(self)
        self._retries = _Retries(self)

    @property
    def _resends(self) -> bool:
        """The adapter declares at least once: a timed-out call may be sent again."""
        return Capability.AT_LEAST_ONCE in self.capabilities

    @classmethod
    def across_examples(cls, evidence: Mapping[str, int], context: Mapping[str, int]
                        ) -> list[str]:
        """A kind of call fault honoured in one example and ignored in another."""
        return ignored_and_honoured(evidence, context)

    def on_fact(self, fact: HarnessFact) -> None:
        self._faults.record(fact)
        if isinstance(fact, Injected) and fact.kind is FaultKind.CRASH_NODE:
            # A crash leaves no word, and the harness does not know which node a caller
            # was on: a retry owed then may have been lost with it.
            self._retries.crashed()

    def observe(self, event: TraceEvent) -> None:
        if event.kind is EventKind.STOP_COMPLETED and self._retries.stopped_at is None:
            self._retries.stopped_at = event.time_ms
            return
        did = event.delivery_id
        if event.kind is EventKind.EFFECT_APPLIED:
            self._observe_applied(did, event)
            return
        if event.kind is EventKind.POSTED:
            d = self._deliveries.get(did or "")
            if d is not None and event.hub == d.target:
                self._faults.ran(d, did, event)
            return
        ended = did if event.kind is EventKind.LEG_ENDED else None
        if event.kind is EventKind.FAILURE_EMITTED:
            ended = event.answers  # the sender is told it failed: the retries are over
        if ended is not None and ended in self._deliveries:
            self._observe_gave_up(self._deliveries[ended], ended, event)
            return
        if did is None or event.kind not in (
            EventKind.ATTEMPT,
            EventKind.ATTEMPT_FAILED,
            EventKind.CALL_RECEIVED,
        ):
            return
        d = self._deliveries.get(did)
        if d is None:
            d = self._deliveries[did] = Delivery(first=event)
        if event.kind is EventKind.ATTEMPT:
            self._observe_attempt(d, did, event)
        elif event.kind is EventKind.ATTEMPT_FAILED:
            self._observe_failed(d, did, event)
        else:
            self._observe_received(d, did, event)

    def _observe_received(self, d: Delivery, did: str, event: TraceEvent) -> None:
        d.received(event)
        self._faults.received(d, did, event)
        if d.timed_out is not None and d.calls > 1 and not self._resends:
            self.flag(
                f"timed-out delivery {did} reached the callee {d.calls} times "
                "(the callee still held it)",
                d.timed_out,
                event,
            )

    def _observe_attempt(self, d: Delivery, did: str, event: TraceEvent) -> None:
        d.sent(event)
        self._faults.sent(d)
        if d.timed_out is not None and not self._resends:
            self.flag(
                f"delivery {did} re-sent after a timed-out attempt (callee still holds it)",
                d.timed_out,
                event,
            )
        self._retries.sent(d, did, event)

    def _truth(self, d: Delivery, event: TraceEvent) -> str | None:
        """Why the harness knows this attempt timed out, or None."""
        if (
            d.expect in CALL_TIMEOUTS
            and not d.ran
            and event.error in self.params.resendable_errors
        ):
            # Received, never run, and called a refusal: the callee still holds it. (A
            # mesh that ignored the fault and failed the call otherwise is not judged.)
            fault = d.expect.value if d.expect is not None else ""
            return f"the harness made that call time out ({fault} at {d.target})"
        # The caller's response timeout runs from when it sent the call (ATTEMPT), however
        # long the call took to reach the callee (CALL_RECEIVED, a hop or more later).
        start = self._faults.timing_since(d)
        timeout = self.params.response_timeout_ms
        if start is not None and event.time_ms - start.time_ms >= timeout:
            if (self._refused_by_harness(d) and d.received_at is None
                    and event.time_ms - start.time_ms == timeout):
                # The refusal the harness made (a rejection armed, a target removed),
                # slowed on its way, landed in the instant the caller's timeout fell due,
                # and came first: a refusal, held by nobody.
                return None
            elapsed = f"{event.time_ms - start.time_ms:,} ms"
            if start is not d.sent_at:
                return f"{event.delivery_id} failed {elapsed} after it reached the callee"
            where = "reached the callee and " if d.received_at is not None else ""
            return f"{event.delivery_id} {where}failed {elapsed} after it was sent"
        return None

    def _observe_failed(self, d: Delivery, did: str, event: TraceEvent) -> None:
        if d.sent_at is None:  # the trace lost the call, or the mesh failed one never made
            self.flag(f"the mesh reports a call of {did} failed ({event.error or 'no error'}), "
                      f"but traced no ATTEMPT of {did} before it: a call never sent cannot "
                      "fail, and its retries cannot be counted", event)
        self._faults.failed(d, did, event)
        d.waiting = False
        truth = self._truth(d, event)
        if truth is not None and not event.timed_out:
            attempt = event.attempt if event.attempt is not None else d.attempts - 1
            self.flag(
                f"the mesh reports {did}'s attempt {attempt} as {event.error or 'failed'} "
                f"(not timed out), but {truth}: that is a response timeout",
                *d.shown(event),
            )
        # The mesh's flag can only add timeouts (an aggregate the mesh itself made, say).
        timed_out = truth is not None or bool(event.timed_out)
        d.last_failure = event
        # A call the harness armed a rejection for is re-sendable whatever the mesh calls
        # its refusal, unless something else may have failed it first, the network (a dial
        # refused) or the stop (a callee gone): then only the mesh's own re-sendable
        # errors say it was refused.
        faults = self._faults
        armed = d.expect is FaultKind.REJECT_NEXT and not (faults.network_may_fail
                                                           or faults.stop_asked)
        d.resendable = not timed_out and (
            armed or event.error in self.params.resendable_errors
        )
        self._retries.failed(d, did)
        if timed_out and d.timed_out is None:
            d.timed_out = event
            if d.calls > 1 and not self._resends:
                self.flag(f"timed-out delivery {did} reached the callee {d.calls} times", event)

    def _owes_retry(self, d: Delivery) -> TraceEvent | None:
        """The rejection still owed a retry: re-sendable, and the budget not yet spent, to
        a target that is there (one the harness removed refuses for good: re-sending to it
        would only spend the budget)."""
        failure = d.last_failure
        if failure is None or not d.resendable or d.attempts > self.params.delivery_retries:
            return None
        if self._target_missing(d):
            return None
        return failure

    def _observe_gave_up(self, d: Delivery, did: str, event: TraceEvent) -> None:
        """The leg ended or the sender was answered: fine unless a retry was still owed
        (a leg the stop's pool drain terminated owes nothing)."""
        failure = self._owes_retry(d)
        d.waiting = False
        if event.kind is EventKind.FAILURE_EMITTED:
            self._answered_terminal(d, did, event)
        if not d.ended:
            d.ended = True
            self._count_ended(d)
        self._retries.ended(d, did, event, failure)

    def _answered_terminal(self, d: Delivery, did: str, event: TraceEvent) -> None:
        """A delivery whose call timed out (the harness's fact or the caller's clock) and is
        never re-sent: its answer names a terminal error (an at-least-once mesh re-sends it,
        so its last call may end otherwise)."""
        if d.timed_out is None or self._resends or event.error is None:
            return
        if event.error in TRANSIENT_ERRORS:
            self.flag(f"delivery {did}, whose call timed out, was answered {event.error}: a "
                      "timeout is terminal, and a transient answer arms its sender to try "
                      "again against a target that may be wedged", d.timed_out, event)
        else:
            self.exercised(TERMINAL)

    def _count_ended(self, d: Delivery) -> None:
        """The evidence a delivery that ended gives, once."""
        if self._resends and d.calls > 1:
            self.exercised(APPLIED_ONCE)
        if d.timed_out is not None:
            if not self._resends:  # an at-least-once mesh re-sends it by contract
                self.exercised(SENT_ONCE)
                if d.aggregate is not None:
                    self.exercised(AGGREGATE_TIMEOUT_FIRST if d.aggregate
                                   else AGGREGATE_REJECTION_FIRST)
        elif d.resendable and d.attempts == self.params.delivery_retries + 1:
            self.exercised(TO_BUDGET)

    def _observe_applied(self, did: str | None, event: TraceEvent) -> None:
        """The callee applied `did`'s request: a second time is the effect applied twice
        (judged for an at-least-once adapter, whose re-sends the callee de-duplicates)."""
        if did is None or not self._resends:
            return
        d = self._deliveries.get(did)
        if d is None:
            d = self._deliveries[did] = Delivery(first=event)
        if d.applied is None:
            d.applied = event
            return
        self.flag(
            f"delivery {did}'s effect applied again at {event.hub} ({d.calls} call(s) reached "
            f"the callee; first applied at {d.applied.hub}, {d.applied.time_ms} ms): an "
            "at-least-once mesh applies each delivery at most once",
            d.applied,
            event,
        )

    def overdue(self, now_ms: int) -> list[Violation]:
        return self._retries.overdue(now_ms, self._owes_retry)

    def unfinished(self) -> list[Violation]:
        return self._faults.contradicted() + [
            self.violation(
                f"timed-out delivery {did} reached the callee {d.calls} times (expected 1)",
                d.timed_out,
            )
            for did, d in self._deliveries.items()
            if d.timed_out is not None and d.calls != 1 and not self._resends
            and not (d.calls == 0 and self._no_callee(d))
        ]

    def _no_callee(self, d: Delivery) -> bool:
        """A timed-out call with no callee to reach: refused at the door by the armed
        reject_next after its caller gave up (an armed refusal must reach no callee), to a
        target the harness removed or never made, lost on a network that may fail it
        (a partition, a crash, a link held past the timeout), or slowed on its way past
        the run's end or the stop's (which cut it). Sent once, held by nobody."""
        end = self._retries.stopped_at if self._retries.stopped_at is not None else self.now_ms
        return (self._refused_by_harness(d) or self._faults.network_may_fail
                or self._faults.slowed_past(d, end))

    def _refused_by_harness(self, d: Delivery) -> bool:
        """Whether the harness refuses `d` at the door: a rejection armed for it, or a
        target the harness removed or never made."""
        return d.expect is FaultKind.REJECT_NEXT or self._target_missing(d)

    def _target_missing(self, d: Delivery) -> bool:
        """Whether `d`'s target is a hub the harness removed or never made."""
        return d.target is not None and self.harness.missing(d.target)


check = check_function(NoResendAfterTimeout)
