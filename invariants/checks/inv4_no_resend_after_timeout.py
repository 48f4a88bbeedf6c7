"""INV4: a delivery the callee is still holding is never re-sent (seed 000).

A response timeout means the callee ACCEPTED the call and will still run it; a rejection
means it holds nothing. Pre-fix, a timed-out delivery reached the callee 7 times.

Obligations (what each reads), with the evidence each counts:
- "timed-out deliveries sent once": once an attempt has timed out the delivery is not
  attempted again, and it reached the callee exactly once (ATTEMPT, CALL_RECEIVED,
  ATTEMPT_FAILED, LEG_ENDED / FAILURE_EMITTED). Counted per timed-out delivery that ended.
- "rejected deliveries re-sent to the budget": a rejected delivery is re-sent until its
  budget (6 retries, 7 calls) is spent, and never attempted more (the same events).
  Counted per delivery that spent its whole budget on rejections.
- "retry delays timed": each retry comes min(250*2^n, 3000) ms after the failure it
  answers, neither earlier nor later (decided the moment virtual time passes the delay).
  Counted per retry of a rejected attempt.
- "aggregates (timeout first) sent once" and "aggregates (rejection first) sent once": a
  timeout anywhere in an aggregate error is the same fact as a bare one, whichever member
  comes first (seed 000's `ATimeoutCarriedInsideAnAggregate_IsAlsoNotResent`): a delivery
  whose call the harness made fail with an aggregate (AGGREGATE_NEXT, with its order) is
  held to "timed-out deliveries sent once". Counted per such delivery that ended. Not
  applicable to an adapter without the aggregate faults capability.
- "injected call faults honoured": a call the harness made time out (TIMEOUT_NEXT or
  AGGREGATE_NEXT) does not run at the callee while its caller still waits, and one it made
  be rejected (REJECT_NEXT) never reaches the callee; a mesh that ignores the faults it is
  given would make every verdict about them vacuous. A kind of fault the mesh ignored and
  also honoured in the run is a violation (in one example at quiescence, across examples
  from the run's summed counts: `across_examples`); one it ignored every
  time is not exercised ("reject_next faults honoured", "timeout_next faults honoured",
  "aggregate_next faults honoured": counted per fault of that kind spent as armed: a
  timeout's call failing no sooner than a response timeout after it was sent, a
  rejection's at once, but not at a target the harness removed or after it began the
  stop, which fail a call by themselves).
  The other way round, a call refused with a re-sendable error though the harness armed
  no rejection and asked for no stop is a violation too, and so is a call that timed out
  though the harness spent no timeout on it, never slowed, blocked or removed its target
  and asked for no stop: a call fails only as the harness made it (a fault book that
  spends more than it was given).

- "delivery effects applied at most once": for an adapter that declares at least once
  (a timed-out call is sent again, and the callee de-duplicates the re-sends), each
  delivery's effect is applied at most once however often it reached the callee
  (EFFECT_APPLIED, the callee's word that it applied a call's request). For such an
  adapter a re-send after a timeout is no violation, and "timed-out deliveries sent once"
  and the two aggregate obligations are not applicable; without the capability this
  obligation is not applicable and nothing else changes. Counted per delivery the callee
  received more than once, when it ended.

Whether an attempt timed out is a fact the harness decides, not the mesh's say-so: it
timed out when the harness armed TIMEOUT_NEXT (or AGGREGATE_NEXT, spent first) at its
target and this was the call that reached the callee (harness facts: the faults
injected, consumed in call order) and the mesh, though the callee never ran it, calls
its failure a re-sendable refusal; or when it failed a whole response timeout after it
was sent (its ATTEMPT: the caller's timer, however long the call took to reach the
callee). The mesh's `timed_out` flag can only add timeouts (an aggregate the mesh itself
made, say); a flag that denies a timeout the harness knows of
is a violation naming both facts. Likewise a call the harness made be rejected (REJECT_NEXT) is a
rejection whatever the mesh names its error; otherwise `resendable_errors` names them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from invariants.adapter import Capability, FaultKind
from invariants.checks.harness_facts import HarnessFact, Injected, StopAsked
from invariants.checks.monitor import Monitor, check_function
from invariants.checks.params import DEFAULT_PARAMS, CheckParams
from invariants.checks.violation import Violation
from invariants.trace import EventKind, TraceEvent

SENT_ONCE = "timed-out deliveries sent once"
TO_BUDGET = "rejected deliveries re-sent to the budget"
DELAYS = "retry delays timed"
AGGREGATE_TIMEOUT_FIRST = "aggregates (timeout first) sent once"
AGGREGATE_REJECTION_FIRST = "aggregates (rejection first) sent once"
APPLIED_ONCE = "delivery effects applied at most once"
_RESENT_BY_CONTRACT = ("a re-send after a timeout is its contract, held to "
                       f"{APPLIED_ONCE!r} instead")
# "injected call faults honoured", per kind: a kind the mesh ignores every time is one
# whose verdicts would all be vacuous.
HONOURED: dict[FaultKind, str] = {
    kind: f"{kind.value} faults honoured"
    for kind in (FaultKind.REJECT_NEXT, FaultKind.TIMEOUT_NEXT, FaultKind.AGGREGATE_NEXT)
}
# Sightings of a fault of that kind spent as armed but not honoured: with any honoured
# case of the kind in the run, in this example or another, a violation.
IGNORED: dict[FaultKind, str] = {kind: f"{kind.value} faults ignored" for kind in HONOURED}
_CALL_TIMEOUTS = (FaultKind.TIMEOUT_NEXT, FaultKind.AGGREGATE_NEXT)


@dataclass
class _Delivery:
    first: TraceEvent
    target: str | None = None
    attempts: int = 0
    sent_at: TraceEvent | None = None  # the current attempt's ATTEMPT
    received_at: TraceEvent | None = None  # and its CALL_RECEIVED
    expect: FaultKind | None = None  # the fault the harness armed that this call consumed
    last_failure: TraceEvent | None = None
    resendable: bool = False  # the last failure owes a retry while the budget lasts
    timed_out: TraceEvent | None = None
    calls: int = 0
    ended: bool = False
    ran: bool = False  # the callee ran the current attempt (offered it to the target hub)
    applied: TraceEvent | None = None  # the first EFFECT_APPLIED of the delivery
    aggregate: bool | None = None  # a call failed with an armed aggregate: timeout first?
    waiting: bool = False  # the caller awaits the current attempt's answer


class NoResendAfterTimeout(Monitor):
    check_id = "INV4"
    title = "a timed-out delivery is never re-sent"
    needs = frozenset({Capability.GRAIN_ROUTER})
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
        APPLIED_ONCE: "no grain delivery reached the callee twice: no timeout_next the "
        "harness armed was followed by a re-send (is the INV4 plan's `timeout` family on, "
        "and does the at-least-once mesh re-send a timed-out call?)",
    })
    obligation_needs = MappingProxyType({
        AGGREGATE_TIMEOUT_FIRST: Capability.AGGREGATE_FAULTS,
        AGGREGATE_REJECTION_FIRST: Capability.AGGREGATE_FAULTS,
        HONOURED[FaultKind.AGGREGATE_NEXT]: Capability.AGGREGATE_FAULTS,
        APPLIED_ONCE: Capability.AT_LEAST_ONCE,
    })
    obligation_waived_by = MappingProxyType({
        name: (Capability.AT_LEAST_ONCE, _RESENT_BY_CONTRACT)
        for name in (SENT_ONCE, AGGREGATE_TIMEOUT_FIRST, AGGREGATE_REJECTION_FIRST)
    })

    def __init__(self, params: CheckParams = DEFAULT_PARAMS) -> None:
        super().__init__(params)
        self._deliveries: dict[str, _Delivery] = {}
        self._owing: dict[str, _Delivery] = {}  # deliveries whose last failure owes a retry
        self._stopped_at: int | None = None  # nothing is retried once the stop completed
        self._armed: dict[tuple[FaultKind, str], int] = {}  # faults the harness armed, unspent
        self._aggregates: dict[str, list[bool]] = {}  # target -> armed aggregates' orders
        # Call faults the mesh honoured at least once, and the violations of those it
        # ignored: a kind ignored every time is one the mesh does not model (its
        # obligations go unexercised); a kind honoured only sometimes is a bug.
        self._honoured: set[FaultKind] = set()
        self._removed: set[str] = set()  # targets the harness removed
        self._held: set[str] = set()  # and those it slowed or blocked: a call may time out
        self._stop_asked = False  # once asked, calls may be refused as shutting down
        self._ignores: list[tuple[FaultKind, Violation]] = []

    @property
    def _resends(self) -> bool:
        """The adapter declares at least once: a timed-out call may be sent again."""
        return Capability.AT_LEAST_ONCE in self.capabilities

    def _ignored(self, kind: FaultKind, violation: Violation) -> None:
        self._ignores.append((kind, violation))
        self.saw(IGNORED[kind])

    @classmethod
    def across_examples(cls, evidence: Mapping[str, int], context: Mapping[str, int]
                        ) -> list[str]:
        """A kind honoured in one example and ignored in another: each example alone is
        consistent (it honoured all or none), the run is not."""
        return [
            f"{kind.value} faults honoured in {evidence[honoured]} case(s) and ignored in "
            f"{context[IGNORED[kind]]} across the run: a mesh that honours a kind of fault "
            "must honour it every time"
            for kind, honoured in HONOURED.items()
            if evidence.get(honoured, 0) and context.get(IGNORED[kind], 0)
        ]

    def on_fact(self, fact: HarnessFact) -> None:
        if isinstance(fact, StopAsked):
            self._stop_asked = True
        if not isinstance(fact, Injected):
            return
        if fact.kind is FaultKind.REMOVE_TARGET:
            self._removed.add(fact.target)
        elif fact.kind in (FaultKind.BLOCK_HUB, FaultKind.SLOW_DESTINATION):
            self._held.add(fact.target)
        if fact.kind is FaultKind.AGGREGATE_NEXT:
            self._aggregates.setdefault(fact.target, []).extend([fact.timeout_first] * fact.count)
        elif fact.kind in (FaultKind.REJECT_NEXT, FaultKind.TIMEOUT_NEXT):
            key = (fact.kind, fact.target)
            self._armed[key] = self._armed.get(key, 0) + fact.count

    def _consume(self, kind: FaultKind, target: str | None) -> bool:
        key = (kind, target or "")
        left = self._armed.get(key, 0)
        if left <= 0:
            return False
        self._armed[key] = left - 1
        return True

    def observe(self, event: TraceEvent) -> None:
        if event.kind is EventKind.STOP_COMPLETED and self._stopped_at is None:
            self._stopped_at = event.time_ms
            return
        did = event.delivery_id
        if event.kind is EventKind.EFFECT_APPLIED:
            self._observe_applied(did, event)
            return
        if event.kind is EventKind.POSTED:
            d = self._deliveries.get(did or "")
            if d is not None and event.hub == d.target:
                d.ran = True
                if d.expect in _CALL_TIMEOUTS and d.waiting and d.sent_at is not None:
                    fault = d.expect.value if d.expect is not None else ""
                    self._ignored(d.expect, self.violation(
                        f"the harness armed {fault} at {d.target}, but {did}'s call ran at "
                        f"the callee {event.time_ms - d.sent_at.time_ms} ms after it was "
                        "sent, its caller still waiting: the fault was not honoured",
                        d.sent_at, event))
                    d.expect = None
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
            d = self._deliveries[did] = _Delivery(first=event)
        if event.kind is EventKind.ATTEMPT:
            self._observe_attempt(d, did, event)
        elif event.kind is EventKind.ATTEMPT_FAILED:
            self._observe_failed(d, did, event)
        else:
            d.calls += 1
            d.received_at = event
            if d.expect is FaultKind.REJECT_NEXT:
                self._ignored(d.expect, self.violation(
                    f"the harness armed reject_next at {d.target}, but {did}'s call reached "
                    "the callee: a rejected call is held by nobody",
                    *(e for e in (d.sent_at, event) if e is not None)))
                d.expect = None
            # A timeout the harness armed is spent by the call that reaches the callee, an
            # aggregate (which holds one) before a bare one.
            if d.expect is None:
                aggregates = self._aggregates.get(d.target or "")
                if aggregates:
                    d.expect, d.aggregate = FaultKind.AGGREGATE_NEXT, aggregates.pop(0)
                elif self._consume(FaultKind.TIMEOUT_NEXT, d.target):
                    d.expect = FaultKind.TIMEOUT_NEXT
            if d.timed_out is not None and d.calls > 1 and not self._resends:
                self.flag(
                    f"timed-out delivery {did} reached the callee {d.calls} times "
                    "(the callee still held it)",
                    d.timed_out,
                    event,
                )

    def _observe_attempt(self, d: _Delivery, did: str, event: TraceEvent) -> None:
        d.attempts += 1
        d.target = event.target or d.target
        d.sent_at, d.received_at, d.expect, d.ran = event, None, None, False
        d.waiting = True
        if d.aggregate is not None and d.timed_out is None:
            d.aggregate = None  # that aggregate's attempt was not the delivery's timeout
        # A rejection the harness armed is spent by the next call to the target.
        if self._consume(FaultKind.REJECT_NEXT, d.target):
            d.expect = FaultKind.REJECT_NEXT
        if d.timed_out is not None and not self._resends:
            self.flag(
                f"delivery {did} re-sent after a timed-out attempt (callee still holds it)",
                d.timed_out,
                event,
            )
        limit = self.params.delivery_retries + 1
        if d.attempts == limit + 1:
            self.flag(f"delivery {did} attempted more than {limit} times", d.first, event)
        failure = d.last_failure
        if failure is not None and d.attempts > 1:
            wait = self.params.retry_delay_ms(d.attempts - 1)
            if d.resendable:
                self.exercised(DELAYS)
            if event.time_ms - failure.time_ms < wait:
                self.flag(
                    f"delivery {did} retry {d.attempts - 1} after "
                    f"{event.time_ms - failure.time_ms} ms (backoff {wait} ms)",
                    failure,
                    event,
                )
        d.last_failure, d.resendable = None, False
        self._owing.pop(did, None)

    def _unprovoked_timeout(self, d: _Delivery, did: str, event: TraceEvent) -> bool:
        """A call timed out (by the mesh's word or the clock) that nothing the harness did
        could make time out: no timeout or aggregate armed and spent on it, its target
        never slowed, blocked or removed, no stop asked for."""
        if d.expect is not None or not d.waiting or self._stop_asked:
            return False
        target = d.target or ""
        if target in self._held or target in self._removed or self.harness.posted(did) is None:
            return False
        sent = d.sent_at
        late = sent is not None and event.time_ms - sent.time_ms >= self.params.response_timeout_ms
        return bool(event.timed_out) or late

    def _failed_as_armed(self, d: _Delivery, event: TraceEvent) -> bool:
        """Whether the call the fault was spent on failed the way the fault makes it: a
        timeout (alone or in an aggregate) no sooner than a response timeout after the
        call was sent; a rejection at once, unless the harness had removed the target or
        begun the stop, either of which fails a call by itself."""
        if d.expect is FaultKind.REJECT_NEXT:
            return not self._stop_asked and (d.target or "") not in self._removed
        sent = d.sent_at
        return sent is not None and event.time_ms - sent.time_ms >= self.params.response_timeout_ms

    def _truth(self, d: _Delivery, event: TraceEvent) -> str | None:
        """Why the harness knows this attempt timed out, or None."""
        timeout = self.params.response_timeout_ms
        if (
            d.expect in _CALL_TIMEOUTS
            and not d.ran
            and event.error in self.params.resendable_errors
        ):
            # Received, never run, and called a refusal: the callee still holds it. (A
            # mesh that ignored the fault and failed the call otherwise is not judged.)
            fault = d.expect.value if d.expect is not None else ""
            return f"the harness made that call time out ({fault} at {d.target})"
        # The caller's response timeout runs from when it sent the call (ATTEMPT), however
        # long the call took to reach the callee (CALL_RECEIVED, a hop or more later).
        start = d.sent_at or d.received_at
        if start is not None and event.time_ms - start.time_ms >= timeout:
            where = "reached the callee and " if d.received_at is not None else ""
            return f"{event.delivery_id} {where}failed {event.time_ms - start.time_ms:,} ms " \
                "after it was sent"
        return None

    def _observe_failed(self, d: _Delivery, did: str, event: TraceEvent) -> None:
        if (d.expect is None and d.waiting and not self._stop_asked
                and event.error in self.params.resendable_errors and d.received_at is None
                and self.harness.posted(did) is not None):  # judged only beside the facts
            # A refusal out of nowhere: the harness armed none, nor began a stop.
            self.flag(f"the mesh reports {did}'s attempt {d.attempts - 1} as {event.error}, "
                      f"but the harness armed no rejection at {d.target} and asked for no "
                      "stop: a call fails only as the harness made it",
                      *(e for e in (d.sent_at, event) if e is not None))
        elif self._unprovoked_timeout(d, did, event):
            self.flag(f"{did}'s attempt {d.attempts - 1} timed out, but the harness armed no "
                      f"timeout at {d.target}, never slowed, blocked or removed it and asked "
                      "for no stop: a call fails only as the harness made it",
                      *(e for e in (d.sent_at, event) if e is not None))
        if d.expect is not None and d.waiting and self._failed_as_armed(d, event):
            self.exercised(HONOURED[d.expect])
            self._honoured.add(d.expect)
        d.waiting = False
        truth = self._truth(d, event)
        if truth is not None and not event.timed_out:
            attempt = event.attempt if event.attempt is not None else d.attempts - 1
            self.flag(
                f"the mesh reports {did}'s attempt {attempt} as {event.error or 'failed'} "
                f"(not timed out), but {truth}: that is a response timeout",
                *(e for e in (d.sent_at, event) if e is not None),
            )
        timed_out = truth is not None or bool(event.timed_out)
        d.last_failure = event
        d.resendable = not timed_out and (
            d.expect is FaultKind.REJECT_NEXT or event.error in self.params.resendable_errors
        )
        if d.resendable:
            self._owing[did] = d
        if timed_out and d.timed_out is None:
            d.timed_out = event
            if d.calls > 1 and not self._resends:
                self.flag(f"timed-out delivery {did} reached the callee {d.calls} times", event)

    def _owes_retry(self, d: _Delivery) -> TraceEvent | None:
        """The rejection still owed a retry: re-sendable, and the budget not yet spent."""
        failure = d.last_failure
        if failure is None or not d.resendable or d.attempts > self.params.delivery_retries:
            return None
        return failure

    def _observe_gave_up(self, d: _Delivery, did: str, event: TraceEvent) -> None:
        """The leg ended or the sender was answered: fine unless a retry was still owed
        (a leg the stop's pool drain terminated owes nothing)."""
        failure = self._owes_retry(d)
        d.waiting = False
        if not d.ended:
            d.ended = True
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
        d.last_failure, d.resendable = None, False
        self._owing.pop(did, None)
        if failure is None or event.reason == "drained":
            return
        self.flag(
            f"rejected delivery {did} given up after {d.attempts} attempt(s) "
            f"(budget of {self.params.delivery_retries} retries not spent)",
            failure,
            event,
        )

    def _observe_applied(self, did: str | None, event: TraceEvent) -> None:
        """The callee applied `did`'s request: a second time is the effect applied twice
        (judged for an at-least-once adapter, whose re-sends the callee de-duplicates)."""
        if did is None or not self._resends:
            return
        d = self._deliveries.get(did)
        if d is None:
            d = self._deliveries[did] = _Delivery(first=event)
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
        found: list[Violation] = []
        for did, d in self._owing.items():
            failure = self._owes_retry(d)
            if failure is None:
                continue
            due = failure.time_ms + self.params.retry_delay_ms(d.attempts)
            if self._stopped_at is not None and self._stopped_at <= due:
                continue
            if now_ms > due:
                found.append(
                    self.violation(
                        f"rejected delivery {did} not re-sent after attempt {d.attempts} "
                        f"within its backoff of {self.params.retry_delay_ms(d.attempts)} ms "
                        f"(budget of {self.params.delivery_retries} retries not spent)",
                        failure,
                    )
                )
        return found

    def unfinished(self) -> list[Violation]:
        ignored = [v for kind, v in self._ignores if kind in self._honoured]
        return ignored + [
            self.violation(
                f"timed-out delivery {did} reached the callee {d.calls} times (expected 1)",
                d.timed_out,
            )
            for did, d in self._deliveries.items()
            if d.timed_out is not None and d.calls != 1 and not self._resends
        ]


check = check_function(NoResendAfterTimeout)
