"""INV2: a subscription to a missing target dies after N retries (seed 004, Invariant 2).

Every subscription makes at most N+1 attempts (N = 5 retries), answers or errors
terminally within bounded virtual time, and sends nothing more once it has terminated or
taken its first answer. The unbounded resubscribe to a node that does not exist is the
phantom-path storm.

Obligations (what each reads), with the evidence each counts:
- "subscriptions that spent their N retries": a subscription that terminated after
  exactly N+1 attempts, within the bound, has shown the bound (SUBSCRIBE_ATTEMPT,
  SUBSCRIBE_TERMINATED).
- "closed subscriptions watched": once a subscription has terminated or taken its first
  answer nothing more is sent for it (SUBSCRIBE_*, POSTED/LEG_STARTED/ATTEMPT carrying its
  requests); counted per subscription closed.

A subscription the harness started (harness facts) is owed its bound from the moment it
was started, whether or not the trace ever mentions it: a mesh whose trace is silent
about it has neither answered nor terminated it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType

from invariants.adapter import Capability
from invariants.checks.harness_facts import HarnessFact, Subscribed
from invariants.checks.monitor import Monitor, check_function
from invariants.checks.params import DEFAULT_PARAMS, CheckParams
from invariants.checks.violation import Violation
from invariants.trace import EventKind, TraceEvent

# Events that carry a subscription's request on its way; one with a request id no attempt
# announced is a send nobody counted.
_CARRIERS = frozenset({EventKind.POSTED, EventKind.LEG_STARTED, EventKind.ATTEMPT})


@dataclass
class _Subscription:
    first: TraceEvent
    attempts: int = 0
    requests: set[str] = field(default_factory=set)
    answered: TraceEvent | None = None
    terminated: TraceEvent | None = None

    @property
    def closed(self) -> TraceEvent | None:
        return self.terminated or self.answered


SPENT = "subscriptions that spent their N retries"
CLOSED = "closed subscriptions watched"


class BoundedSubscribe(Monitor):
    check_id = "INV2"
    title = "subscribe to a missing target is bounded"
    needs = frozenset({Capability.SUBSCRIBE})
    obligations = MappingProxyType({
        SPENT: "no subscription terminated after N+1 attempts: none was made to a missing "
        "target, or subscribe_retries is not the mesh's N",
        CLOSED: "no subscription answered or terminated (is the `subscribe` family on?)",
    })

    def __init__(self, params: CheckParams = DEFAULT_PARAMS) -> None:
        super().__init__(params)
        self._subs: dict[str, _Subscription] = {}
        self._unseen: dict[str, Subscribed] = {}  # started by the harness, not yet traced

    def on_fact(self, fact: HarnessFact) -> None:
        if isinstance(fact, Subscribed):
            self._unseen[fact.subscription_id] = fact

    def observe(self, event: TraceEvent) -> None:
        sid = event.subscription_id
        if sid is None:
            return
        self._unseen.pop(sid, None)
        sub = self._subs.get(sid)
        if sub is None:
            sub = self._subs[sid] = _Subscription(first=event)
        closed = sub.closed
        fresh = (
            event.kind is EventKind.SUBSCRIBE_ATTEMPT
            or (
                event.kind in _CARRIERS
                and event.delivery_id is not None
                and event.delivery_id not in sub.requests
            )
        )
        if fresh and closed is not None:
            state = "terminated" if sub.terminated else "answered"
            self.flag(f"subscription {sid} sent {event.kind.value} after it {state}", closed, event)
        if event.kind is EventKind.SUBSCRIBE_ATTEMPT:
            sub.attempts += 1
            if event.delivery_id is not None:
                sub.requests.add(event.delivery_id)
            limit = self.params.subscribe_retries + 1
            if sub.attempts == limit + 1:
                self.flag(
                    f"subscription {sid} made more than {limit} attempts "
                    f"({self.params.subscribe_retries} retries)",
                    sub.first,
                    event,
                )
        elif event.kind is EventKind.SUBSCRIBE_TERMINATED:
            if sub.terminated is not None:
                self.flag(f"subscription {sid} terminated twice", sub.terminated, event)
                return
            if sub.answered is None:
                self.exercised(CLOSED)
            sub.terminated = event
            if sub.attempts == self.params.subscribe_retries + 1:
                self.exercised(SPENT)
            # A termination past the bound was already decided when time passed it
            # (`overdue`, asked before this event).
        elif event.kind is EventKind.SUBSCRIBE_ANSWERED and sub.answered is None:
            if sub.terminated is None:
                self.exercised(CLOSED)
            sub.answered = event

    def _silent(self, fact: Subscribed) -> Violation:
        return self.violation(
            f"the harness subscribed {fact.subscription_id} ({fact.subscriber} -> "
            f"{fact.target}) at {fact.time_ms} ms, but the trace shows nothing of it "
            f"within its bound of {self.params.subscribe_bound_ms} ms"
        )

    def overdue(self, now_ms: int) -> list[Violation]:
        bound = self.params.subscribe_bound_ms
        silent = [self._silent(f) for f in self._unseen.values()
                  if now_ms - f.time_ms > bound]
        return silent + [
            self.violation(
                f"subscription {sid} neither answered nor terminated {now_ms - s.first.time_ms} ms "
                f"after it started (bound {bound} ms)",
                s.first,
            )
            for sid, s in self._subs.items()
            if s.closed is None and now_ms - s.first.time_ms > bound
        ]

    def unfinished(self) -> list[Violation]:
        return [self._silent(f) for f in self._unseen.values()] + [
            self.violation(f"subscription {sid} still open at quiescence", s.first)
            for sid, s in self._subs.items()
            if s.closed is None
        ]


check = check_function(BoundedSubscribe)
