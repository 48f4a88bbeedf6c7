"""INV2: a subscription to a missing target dies after N retries (seed 004, Invariant 2).

Every subscription makes at most N+1 attempts, each retry its backoff after the failure it
answers, answers or terminates within bounded virtual time and sends nothing once closed;
one to a live target the harness left alone is answered. Every subscription ends with the
silo, whatever state it is in: one still open when the stop completed (`STOP_COMPLETED`),
a request in flight or waiting out a resubscribe backoff, is terminated in that instant
and sends nothing after it.

Obligations (docs/dynamic-invariants.md, INV2): "subscriptions that spent their N retries",
"closed subscriptions watched", "resubscribe delays timed", "subscriptions to a live target
answered", "subscriptions in backoff ended with the silo", "answers after an attempt timed
out not taken".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType

from invariants.adapter import FaultKind
from invariants.capabilities import NETWORK_FAULTS
from invariants.checks.harness_facts import HarnessFact, Injected, StopAsked, Subscribed
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
    sent: TraceEvent | None = None  # the latest SUBSCRIBE_ATTEMPT
    failure: TraceEvent | None = None  # the FAILURE_EMITTED answering its request
    failed_from: int | None = None  # that failure emitted (ms): the earliest it is known
    failed_by: int | None = None  # handled by the subscriber (ms): the latest

    def learnt(self, timeout_ms: int, *, late_taken: bool = False) -> tuple[int, int] | None:
        """(earliest, latest) time the latest attempt's failure can have been acted on:
        its failure emitted or handled, or its timeout, whichever comes first (with
        `late_taken`, a failure after the timeout may be acted on when it lands)."""
        if self.sent is None:
            return None
        expiry = self.sent.time_ms + timeout_ms
        earliest = expiry if self.failed_from is None else min(self.failed_from, expiry)
        latest = expiry if self.failed_by is None else min(self.failed_by, expiry)
        if late_taken and self.failed_by is not None:
            latest = self.failed_by
        return earliest, max(earliest, latest)

    @property
    def closed(self) -> TraceEvent | None:
        return self.terminated or self.answered

    def in_backoff(self, now_ms: int, timeout_ms: int, retries: int) -> bool:
        """Open, its latest attempt failed or timed out and a retry still owed, none sent:
        waiting out a resubscribe backoff."""
        if self.closed is not None or self.sent is None or self.attempts > retries:
            return False
        return self.failed_from is not None or now_ms > self.sent.time_ms + timeout_ms


SPENT = "subscriptions that spent their N retries"
CLOSED = "closed subscriptions watched"
DELAYS = "resubscribe delays timed"
LIVE = "subscriptions to a live target answered"
# The stop's edge: a subscription between attempts when the silo stops ends with it too.
STOP_BACKOFF = "subscriptions in backoff ended with the silo"
# An attempt that timed out stays timed out: its answer, landing later, is not taken.
LATE = "answers after an attempt timed out not taken"
# Faults at a target that excuse a subscription to it from being answered.
_EXCUSING = frozenset({FaultKind.REMOVE_TARGET, FaultKind.BLOCK_HUB,
                       FaultKind.SLOW_DESTINATION})


# What only the subscriber records: heard from by one after a crash, its subscription was
# not lost (its request, on the wire at the crash, may still land at its target).
_SUBSCRIBERS_OWN = frozenset({EventKind.SUBSCRIBE_ATTEMPT, EventKind.SUBSCRIBE_ANSWERED,
                              EventKind.SUBSCRIBE_TERMINATED})


class BoundedSubscribe(Monitor):
    check_id = "INV2"
    title = "subscribe to a missing target is bounded"
    reads_custom_events = False
    obligations = MappingProxyType({
        SPENT: "no subscription terminated after N+1 attempts: none was made to a missing "
        "target, or subscribe_retries is not the mesh's N",
        CLOSED: "no subscription answered or terminated (is the `subscribe` family on?)",
        DELAYS: "no subscription was retried: none failed or timed out with retries left "
        "(is the `subscribe` family on, and subscribe_retries at least 1?)",
        LIVE: "no subscription to an existing hub was answered free of a removal, a block, "
        "a slow destination or the stop (does the mesh emit SUBSCRIBE_ANSWERED?)",
        STOP_BACKOFF: "no subscription was waiting out a resubscribe backoff when the "
        "harness stopped the silo (are the `subscribe` and `stop` families on, and does "
        "the mesh emit SUBSCRIBE_TERMINATED for what its stop ends?)",
        LATE: "no subscription attempt timed out (are the `subscribe` and `block` families "
        "on, and is subscribe_timeout_ms the mesh's?)",
    })

    @classmethod
    def by_policy(cls, params: CheckParams) -> dict[str, str]:
        if params.late_subscribe_answers == "taken":
            return {LATE: "late_subscribe_answers = 'taken': the mesh takes an answer to an "
                          "attempt that timed out, by design"}
        return {}

    def __init__(self, params: CheckParams = DEFAULT_PARAMS) -> None:
        super().__init__(params)
        self._subs: dict[str, _Subscription] = {}
        self._unseen: dict[str, Subscribed] = {}  # started by the harness, not yet traced
        self._requests: dict[str, _Subscription] = {}  # latest request id -> subscription
        # failure delivery id -> the subscription, and the attempt (its SUBSCRIBE_ATTEMPT)
        # whose request it answers
        self._failures: dict[str, tuple[_Subscription, TraceEvent]] = {}
        self._owing: dict[str, _Subscription] = {}  # open, its latest attempt owing a retry
        self._hubs: set[str] = set()  # hubs the trace says exist
        self._excused: set[str] = set()  # hubs the harness removed or blocked
        self._live: dict[str, Subscribed] = {}  # to a live hub, owed an answer
        self._stop_asked = False
        self._network = False  # a fault of the network was injected
        # Open when the harness crashed a node, or made while one was down, and not heard
        # from since: lost with their subscriber, perhaps, so owed no end.
        self._lost: set[str] = set()
        self._late_taken = params.late_subscribe_answers == "taken"
        self._silo_end = _SiloEnd(self)
        self._timeouts: set[int] = set()  # attempts (their SUBSCRIBE_ATTEMPT) that timed out

    @property
    def lost(self) -> set[str]:
        """Subscriptions a crash may have taken with their subscriber, not heard from since."""
        return self._lost

    def on_fact(self, fact: HarnessFact) -> None:
        if isinstance(fact, Subscribed):
            self._unseen[fact.subscription_id] = fact
            if fact.time_ms < self.harness.down_until:
                self._lost.add(fact.subscription_id)
            if fact.target in self._hubs and fact.target not in self._excused \
                    and not self._stop_asked and not self._network:
                self._live[fact.subscription_id] = fact
        elif isinstance(fact, Injected) and fact.kind in _EXCUSING:
            self._excused.add(fact.target)
            self._live = {k: v for k, v in self._live.items() if v.target != fact.target}
        elif isinstance(fact, Injected) and fact.kind in NETWORK_FAULTS:
            # Any subscription may lose its answer now (the harness does not know which
            # hubs share the faulted node): none is owed one.
            self._network = True
            self._live.clear()
            if fact.kind is FaultKind.CRASH_NODE:
                # A crash leaves no word, and the harness does not know which hubs the node
                # hosted: no subscription open at it is owed an end (nor a retry).
                self._lost.update(sid for sid, sub in self._subs.items() if sub.closed is None)
                self._lost.update(self._unseen)
                self._owing.clear()
        elif isinstance(fact, StopAsked):
            self._stop_asked = True
            self._live.clear()

    def observe(self, event: TraceEvent) -> None:
        if event.kind is EventKind.HUB_CREATED and event.hub is not None:
            self._hubs.add(event.hub)
        elif event.kind is EventKind.STOP_COMPLETED:
            self._silo_end.completed(event, self._subs)
        elif event.kind is EventKind.SUBSCRIBE_ANSWERED and event.subscription_id in self._live:
            del self._live[event.subscription_id or ""]
            self.exercised(LIVE)
        if event.kind is EventKind.FAILURE_EMITTED:
            self._failure_emitted(event)
        elif event.kind is EventKind.HANDLED and event.delivery_id in self._failures:
            failed, attempt = self._failures[event.delivery_id or ""]
            # The subscriber has it only once its own hub handles it: a mesh may handle the
            # answer on its way (a reply desk that forwards it), which says nothing of when
            # the subscriber learnt it failed.
            if event.hub == attempt.hub:
                del self._failures[event.delivery_id or ""]
                # Handled once a later attempt was sent, it times that attempt no more.
                if failed.sent is attempt and failed.failed_by is None:
                    failed.failed_by = event.time_ms
        sid = event.subscription_id
        if sid is None:
            return
        self._unseen.pop(sid, None)
        if event.kind in _SUBSCRIBERS_OWN:
            self._lost.discard(sid)  # heard from: it was not lost
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
        if fresh:
            self._sent(sid, sub, event)
        if event.kind in (EventKind.SUBSCRIBE_TERMINATED, EventKind.SUBSCRIBE_ANSWERED):
            self._ended(sid, sub, event)
        if event.kind is EventKind.SUBSCRIBE_ATTEMPT:
            self._observe_attempt(sid, sub, closed, event)
        elif event.kind is EventKind.SUBSCRIBE_TERMINATED:
            self._timed_out(sub, event)
            if sub.terminated is not None:
                self.flag(f"subscription {sid} terminated twice", sub.terminated, event)
                return
            if sub.answered is None:
                self.exercised(CLOSED)
            sub.terminated = event
            self._owing.pop(sid, None)
            if sub.attempts == self.params.subscribe_retries + 1:
                self.exercised(SPENT)
            # A termination past the bound was already decided when time passed it
            # (`overdue`, asked before this event).
        elif event.kind is EventKind.SUBSCRIBE_ANSWERED and sub.answered is None:
            refused = self.params.late_subscribe_answers == "refused"
            if sub.terminated is None and self._timed_out(sub, event) and refused:
                self.flag(f"subscription {sid} took an answer at {event.time_ms} ms, after "
                          f"its attempt {sub.attempts - 1} timed out (sent at "
                          f"{sub.sent.time_ms if sub.sent else 0} ms, timeout "
                          f"{self.params.subscribe_timeout_ms} ms): a late answer to a "
                          "request it had given up on", *(e for e in (sub.sent, event) if e))
            if sub.terminated is None:
                self.exercised(CLOSED)
            sub.answered = event
            self._owing.pop(sid, None)

    def _sent(self, sid: str, sub: _Subscription, event: TraceEvent) -> None:
        """A new send for `sid`: none once it closed, none once the stop completed while
        it was open."""
        closed = sub.closed
        if closed is not None:
            state = "terminated" if sub.terminated else "answered"
            self.flag(f"subscription {sid} sent {event.kind.value} after it {state}", closed, event)
        else:
            self._silo_end.sent(sid, event)

    def _ended(self, sid: str, sub: _Subscription, event: TraceEvent) -> None:
        """A subscription closes: one waiting out its backoff while the harness stops the
        silo is ended by the stop (nothing else ends it between attempts)."""
        if sub.closed is not None:
            return
        if (
            event.kind is EventKind.SUBSCRIBE_TERMINATED and self._stop_asked
            and sub.in_backoff(event.time_ms, self.params.subscribe_timeout_ms,
                               self.params.subscribe_retries)
        ):
            self.exercised(STOP_BACKOFF)
        self._silo_end.ended(sid)

    def _observe_attempt(self, sid: str, sub: _Subscription, closed: TraceEvent | None,
                         event: TraceEvent) -> None:
        """A SUBSCRIBE_ATTEMPT: a retry of an open subscription is held to its backoff, its
        request is the one a failure now answers, and no attempt goes past the bound."""
        if closed is None:
            self._timed_out(sub, event)
            self._resubscribed(sid, sub, event)
        sub.attempts += 1
        sub.sent, sub.failure, sub.failed_from, sub.failed_by = event, None, None, None
        if event.delivery_id is not None:
            sub.requests.add(event.delivery_id)
            self._requests[event.delivery_id] = sub
        if closed is None and sub.attempts <= self.params.subscribe_retries:
            self._owing[sid] = sub
        limit = self.params.subscribe_retries + 1
        if sub.attempts == limit + 1:
            self.flag(
                f"subscription {sid} made more than {limit} attempts "
                f"({self.params.subscribe_retries} retries)",
                sub.first,
                event,
            )

    def _timed_out(self, sub: _Subscription, event: TraceEvent) -> bool:
        """Whether the latest attempt timed out unanswered before `event` (counted once)."""
        sent = sub.sent
        if sent is None or sub.failed_from is not None or sub.closed is not None:
            return False
        late = event.time_ms > sent.time_ms + self.params.subscribe_timeout_ms
        if late and sent.seq not in self._timeouts:
            self._timeouts.add(sent.seq)
            self.exercised(LATE)
        return late

    def _failure_emitted(self, event: TraceEvent) -> None:
        """A DeliveryFailure answering a subscription's latest request: that attempt failed."""
        sub = self._requests.get(event.answers or "")
        if sub is None or sub.sent is None or sub.sent.delivery_id != event.answers:
            return
        if sub.failed_from is None:
            sub.failed_from, sub.failure = event.time_ms, event
            if event.delivery_id is not None:
                self._failures[event.delivery_id] = (sub, sub.sent)

    def _resubscribed(self, sid: str, sub: _Subscription, event: TraceEvent) -> None:
        """Attempt n >= 1: its backoff after the failure it answers, not earlier (a late
        one was decided when time passed its due time, in `overdue`)."""
        window = sub.learnt(self.params.subscribe_timeout_ms, late_taken=self._late_taken)
        if window is None or sub.attempts > self.params.subscribe_retries:
            return  # the first attempt, or one past the bound (flagged as such)
        self.exercised(DELAYS)
        earliest, _latest = window
        delay = self.params.subscribe_delay_ms(sub.attempts)
        if event.time_ms < earliest + delay:
            gap = event.time_ms - earliest
            when = (f"{gap} ms after attempt {sub.attempts - 1} failed" if gap >= 0 else
                    f"before attempt {sub.attempts - 1} failed or timed out")
            self.flag(
                f"subscription {sid} resubscribed (attempt {sub.attempts}) {when} "
                f"(backoff {delay} ms)",
                *(e for e in (sub.sent, sub.failure, event) if e is not None),
            )
        self._owing.pop(sid, None)

    def _silent(self, fact: Subscribed) -> Violation:
        """A subscription the harness started is owed its bound whether or not the trace
        mentions it: a trace silent about it has neither answered nor terminated it."""
        return self.violation(
            f"the harness subscribed {fact.subscription_id} ({fact.subscriber} -> "
            f"{fact.target}) at {fact.time_ms} ms, but the trace shows nothing of it "
            f"within its bound of {self.params.subscribe_bound_ms} ms"
        )

    def _late(self, now_ms: int) -> list[Violation]:
        found: list[Violation] = []
        for sid, sub in self._owing.items():
            window = sub.learnt(self.params.subscribe_timeout_ms, late_taken=self._late_taken)
            if window is None or sub.sent is None:
                continue
            _earliest, latest = window
            delay = self.params.subscribe_delay_ms(sub.attempts)
            if now_ms > latest + delay:
                found.append(self.violation(
                    f"subscription {sid} not resubscribed within its backoff of {delay} ms "
                    f"after attempt {sub.attempts - 1} failed at {latest} ms "
                    f"({sub.attempts - 1} of {self.params.subscribe_retries} retries made)",
                    *(e for e in (sub.sent, sub.failure) if e is not None),
                ))
        return found

    def overdue(self, now_ms: int) -> list[Violation]:
        bound = self.params.subscribe_bound_ms
        silent = [self._silent(f) for f in self._unseen.values()
                  if now_ms - f.time_ms > bound and f.subscription_id not in self._lost]
        return silent + self._silo_end.outlived(now_ms) + self._late(now_ms) + [
            self.violation(
                f"subscription {sid} neither answered nor terminated {now_ms - s.first.time_ms} ms "
                f"after it started (bound {bound} ms)",
                s.first,
            )
            for sid, s in self._subs.items()
            if s.closed is None and now_ms - s.first.time_ms > bound and sid not in self._lost
        ]

    def unfinished(self) -> list[Violation]:
        lost = self._lost
        return [self._silent(f) for f in self._unseen.values()
                if f.subscription_id not in lost] + [
            self.violation(f"subscription {sid} still open at quiescence", s.first)
            for sid, s in self._subs.items()
            if s.closed is None and sid not in lost
        ] + [
            self.violation(
                f"subscription {sid} from {f.subscriber} to {f.target}, which exists and "
                f"was neither removed, blocked nor slowed, was never answered"
                + _ending(self._subs.get(sid)),
                *((self._subs[sid].first,) if sid in self._subs else ()))
            for sid, f in self._live.items()
            # Once the network's verdicts held a segment, any attempt may have been lost
            # on the way, as after a network fault.
            if not self.harness.network_held
        ]


class _SiloEnd:
    """The stop's edge for `monitor`: every subscription still open when the stop
    completed, whatever it was doing, ends in that instant and sends nothing after it."""

    def __init__(self, monitor: BoundedSubscribe) -> None:
        self._monitor = monitor
        self._done: TraceEvent | None = None  # the first STOP_COMPLETED
        # Open when the stop completed, with what each was doing then.
        self._outliving: dict[str, tuple[_Subscription, str]] = {}
        self._sent_after: set[str] = set()

    def completed(self, event: TraceEvent, subs: dict[str, _Subscription]) -> None:
        if self._done is None:
            self._done = event
            self._outliving = {sid: (sub, self._doing(sub, event.time_ms))
                               for sid, sub in subs.items() if sub.closed is None}

    def sent(self, sid: str, event: TraceEvent) -> None:
        """A new send of open subscription `sid`: after the stop completed, it outlived it
        (its first such send is flagged)."""
        done = self._done
        if done is not None and sid in self._outliving and sid not in self._sent_after:
            self._sent_after.add(sid)
            self._monitor.flag(f"subscription {sid} sent {event.kind.value} after the stop "
                               f"completed at {done.time_ms} ms: it outlived the silo",
                               done, event)

    def ended(self, sid: str) -> None:
        self._outliving.pop(sid, None)

    def outlived(self, now_ms: int) -> list[Violation]:
        """Once time has passed the stop's instant: those open then that did not end in it."""
        done = self._done
        if done is None or now_ms <= done.time_ms:
            return []
        return [
            self._monitor.violation(
                f"subscription {sid}, open ({doing}) when the stop completed at "
                f"{done.time_ms} ms, was not terminated with the silo", done, sub.first)
            for sid, (sub, doing) in self._outliving.items() if sid not in self._monitor.lost
        ]

    def _doing(self, sub: _Subscription, now_ms: int) -> str:
        params = self._monitor.params
        if sub.in_backoff(now_ms, params.subscribe_timeout_ms, params.subscribe_retries):
            return f"waiting out its backoff after attempt {sub.attempts - 1} failed"
        return f"attempt {max(sub.attempts - 1, 0)} in flight"


def _ending(sub: _Subscription | None) -> str:
    if sub is None or sub.terminated is None:
        return ""
    return f": it terminated ({sub.terminated.reason or 'no reason'}) after {sub.attempts} " \
        "attempt(s)"


check = check_function(BoundedSubscribe)
