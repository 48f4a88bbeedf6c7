"""INV4's ledger of one grain delivery: its attempts, the calls of it that reached the
callee, the fault the harness armed that its current call spent, and how it last failed."""

from __future__ import annotations

from dataclasses import dataclass

from invariants.adapter import FaultKind
from invariants.trace import TraceEvent


@dataclass(eq=False)  # one delivery is itself, whatever its fields
class Delivery:
    first: TraceEvent
    target: str | None = None
    attempts: int = 0
    sent_at: TraceEvent | None = None  # the current attempt's ATTEMPT
    received_at: TraceEvent | None = None  # and its CALL_RECEIVED
    expect: FaultKind | None = None  # the fault the harness armed that this call consumed
    armed_at: int = 0  # the trace position at which that fault was armed
    last_failure: TraceEvent | None = None
    resendable: bool = False  # the last failure owes a retry while the budget lasts
    timed_out: TraceEvent | None = None
    calls: int = 0
    ended: bool = False
    ran: bool = False  # the callee ran the current attempt (offered it to the target hub)
    applied: TraceEvent | None = None  # the first EFFECT_APPLIED of the delivery
    aggregate: bool | None = None  # a call failed with an armed aggregate: timeout first?
    waiting: bool = False  # the caller awaits the current attempt's answer

    def sent(self, event: TraceEvent) -> None:
        """A new attempt (its ATTEMPT): the current call starts afresh."""
        self.attempts += 1
        self.target = event.target or self.target
        self.sent_at, self.received_at, self.expect, self.ran = event, None, None, False
        self.waiting = True
        if self.aggregate is not None and self.timed_out is None:
            self.aggregate = None  # that aggregate's attempt was not the delivery's timeout

    def received(self, event: TraceEvent) -> None:
        """The current call reached the callee (its CALL_RECEIVED)."""
        self.calls += 1
        self.received_at = event

    def settled(self) -> None:
        """The last failure is answered (by a retry, or by the delivery's end)."""
        self.last_failure, self.resendable = None, False

    def shown(self, event: TraceEvent) -> tuple[TraceEvent, ...]:
        """The events that show a verdict on the current call: its ATTEMPT, then `event`."""
        return tuple(e for e in (self.sent_at, event) if e is not None)
