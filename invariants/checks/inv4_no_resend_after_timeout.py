"""INV4: a delivery the callee is still holding is never re-sent (seed 000).

A response timeout means the callee ACCEPTED the call and will still run it; a rejection
means it holds nothing. So: once an attempt has timed out (a timeout anywhere in the
error graph, aggregates included) the delivery is not attempted again and reached the
callee exactly once; a rejected delivery is re-sent, after min(250*2^n, 3000) ms, until
its budget (6 retries, 7 calls) is spent; no delivery is attempted more than the budget.
Pre-fix, a timed-out delivery reached the callee 7 times.
"""

from __future__ import annotations

from dataclasses import dataclass

from invariants.checks.monitor import Monitor, check_function
from invariants.checks.params import DEFAULT_PARAMS, CheckParams
from invariants.checks.violation import Violation
from invariants.trace import EventKind, TraceEvent


@dataclass
class _Delivery:
    first: TraceEvent
    attempts: int = 0
    last_failure: TraceEvent | None = None
    timed_out: TraceEvent | None = None
    calls: int = 0


class NoResendAfterTimeout(Monitor):
    check_id = "INV4"
    title = "a timed-out delivery is never re-sent"

    def __init__(self, params: CheckParams = DEFAULT_PARAMS) -> None:
        super().__init__(params)
        self._deliveries: dict[str, _Delivery] = {}
        self._stopped_at: int | None = None  # nothing is retried once the stop completed

    def observe(self, event: TraceEvent) -> None:
        if event.kind is EventKind.STOP_COMPLETED and self._stopped_at is None:
            self._stopped_at = event.time_ms
            return
        did = event.delivery_id
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
            d.last_failure = event
            if event.timed_out and d.timed_out is None:
                d.timed_out = event
                if d.calls > 1:
                    self.flag(f"timed-out delivery {did} reached the callee {d.calls} times", event)
        else:
            d.calls += 1
            if d.timed_out is not None and d.calls > 1:
                self.flag(
                    f"timed-out delivery {did} reached the callee {d.calls} times "
                    "(the callee still held it)",
                    d.timed_out,
                    event,
                )

    def _observe_attempt(self, d: _Delivery, did: str, event: TraceEvent) -> None:
        d.attempts += 1
        if d.timed_out is not None:
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
            if event.time_ms - failure.time_ms < wait:
                self.flag(
                    f"delivery {did} retry {d.attempts - 1} after "
                    f"{event.time_ms - failure.time_ms} ms (backoff {wait} ms)",
                    failure,
                    event,
                )
        d.last_failure = None

    def _owes_retry(self, d: _Delivery) -> TraceEvent | None:
        """The rejection still owed a retry: re-sendable, and the budget not yet spent."""
        failure = d.last_failure
        if (
            failure is None
            or failure.timed_out
            or failure.error not in self.params.resendable_errors
            or d.attempts > self.params.delivery_retries
        ):
            return None
        return failure

    def _observe_gave_up(self, d: _Delivery, did: str, event: TraceEvent) -> None:
        """The leg ended or the sender was answered: fine unless a retry was still owed
        (a leg the stop's pool drain terminated owes nothing)."""
        failure = self._owes_retry(d)
        d.last_failure = None
        if failure is None or event.reason == "drained":
            return
        self.flag(
            f"rejected delivery {did} given up after {d.attempts} attempt(s) "
            f"(budget of {self.params.delivery_retries} retries not spent)",
            failure,
            event,
        )

    def overdue(self, now_ms: int) -> list[Violation]:
        found: list[Violation] = []
        for did, d in self._deliveries.items():
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
                        f"(budget of {self.params.delivery_retries} retries not spent)",
                        failure,
                    )
                )
        return found

    def unfinished(self) -> list[Violation]:
        return [
            self.violation(
                f"timed-out delivery {did} reached the callee {d.calls} times (expected 1)",
                d.timed_out,
            )
            for did, d in self._deliveries.items()
            if d.timed_out is not None and d.calls != 1
        ]


check = check_function(NoResendAfterTimeout)
