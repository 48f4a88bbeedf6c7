"""INV4's book of the call faults the harness armed, spent in call order, and its judgement
of whether the mesh honoured them: a call fails only as the harness made it.

A timeout is spent by one of two calls, as the mesh takes its faults: the first to reach
the callee after the arming (the reference, spending at the callee), or the first made
after it (a mesh asking `point()` as each call leaves). They differ when a call was on its
way as the timeout was armed, or when calls overtake each other on the way. The book gives
the fault to the first and moves it when the mesh shows it chose the other: the first
runs while its caller waits, or another times out."""

from __future__ import annotations

from bisect import insort
from collections.abc import Mapping

from invariants.adapter import Capability, FaultKind
from invariants.capabilities import NETWORK_FAULTS
from invariants.checks.harness_facts import HarnessFact, Injected, StopAsked
from invariants.checks.inv4_calls import Delivery
from invariants.checks.monitor import Monitor
from invariants.checks.violation import Violation
from invariants.trace import TraceEvent

# "injected call faults honoured", per kind: a kind the mesh ignores every time is one
# whose verdicts would all be vacuous.
HONOURED: dict[FaultKind, str] = {
    kind: f"{kind.value} faults honoured"
    for kind in (FaultKind.REJECT_NEXT, FaultKind.TIMEOUT_NEXT, FaultKind.AGGREGATE_NEXT)
}
# Sightings of a fault of that kind spent as armed but not honoured: with any honoured
# case of the kind in the run, in this example or another, a violation.
IGNORED: dict[FaultKind, str] = {kind: f"{kind.value} faults ignored" for kind in HONOURED}
CALL_TIMEOUTS = (FaultKind.TIMEOUT_NEXT, FaultKind.AGGREGATE_NEXT)


class CallFaults:
    """The faults the harness armed at each target and the targets it disturbed, judged
    call by call for `monitor` (which records the verdicts and the evidence)."""

    def __init__(self, monitor: Monitor) -> None:
        self._monitor = monitor
        # Faults the harness armed, unspent: the trace position of each arming, oldest first.
        self._armed: dict[tuple[FaultKind, str], list[int]] = {}
        # Target -> the aggregates armed there, unspent, in arming order: (timeout first?,
        # how many, trace position of the arming), kept as counts since the harness states
        # a count, not the calls.
        self._aggregates: dict[str, list[tuple[bool, int, int]]] = {}
        # Target -> the calls on their way to it (sent, not yet received nor failed).
        self._on_way: dict[str, list[Delivery]] = {}
        # Target -> the calls holding a timeout the mesh may have spent on another call
        # made after the arming (the module's docstring).
        self._tentative: dict[str, list[Delivery]] = {}
        # Target -> the timeouts those calls ran past (kind, order, where armed), oldest
        # first: only a call made after the arming may still have spent one.
        self._passed_over: dict[str, list[tuple[FaultKind, bool | None, int]]] = {}
        # Call faults the mesh honoured at least once, and the violations of those it
        # ignored: a kind ignored every time is one the mesh does not model (its
        # obligations go unexercised); a kind honoured only sometimes is a bug.
        self._honoured: set[FaultKind] = set()
        self._ignores: list[tuple[FaultKind, Violation]] = []
        self._removed: set[str] = set()  # targets the harness removed
        self._held: set[str] = set()  # and those it slowed or blocked: a call may time out
        self._slowed_ms: dict[str, int] = {}  # how long calls to each target it slowed take
        self._stop_asked = False  # once asked, calls may be refused as shutting down
        self._network_faults = False  # once the network failed somewhere

    @property
    def stop_asked(self) -> bool:
        """Whether the harness asked for the stop: a callee stopping fails a call by itself."""
        return self._stop_asked

    @property
    def network_may_fail(self) -> bool:
        """Whether any call may fail by the network's doing: once a network fault was
        injected, or the harness's own verdicts held a segment past its link's latency (a
        dial refused, a request late): on a healthy network a call fails as elsewhere."""
        return self._network_faults or self._monitor.harness.network_held

    def record(self, fact: HarnessFact) -> None:
        if isinstance(fact, StopAsked):
            self._stop_asked = True
        if not isinstance(fact, Injected):
            return
        if fact.kind is FaultKind.REMOVE_TARGET:
            self._removed.add(fact.target)
        elif fact.kind in (FaultKind.BLOCK_HUB, FaultKind.SLOW_DESTINATION):
            self._held.add(fact.target)
            if fact.kind is FaultKind.SLOW_DESTINATION:
                self._slowed_ms[fact.target] = fact.duration_ms
        elif fact.kind in NETWORK_FAULTS:
            self._network_faults = True
        if fact.kind is FaultKind.AGGREGATE_NEXT and fact.count > 0:
            self._aggregates.setdefault(fact.target, []).append(
                (fact.timeout_first, fact.count, fact.seq))
        elif fact.kind in (FaultKind.REJECT_NEXT, FaultKind.TIMEOUT_NEXT):
            self._armed.setdefault((fact.kind, fact.target), []).extend([fact.seq] * fact.count)

    def _consume(self, kind: FaultKind, target: str | None, *, armed_before: int | None = None
                 ) -> int | None:
        """Spend the oldest fault of `kind` armed at `target` (if `armed_before`, only one
        armed before the trace event at that position): where it was armed, or None."""
        armed = self._armed.get((kind, target or ""))
        if not armed or (armed_before is not None and armed[0] > armed_before):
            return None
        return armed.pop(0)

    def _ignored(self, kind: FaultKind, violation: Violation) -> None:
        self._ignores.append((kind, violation))
        self._monitor.saw(IGNORED[kind])

    def contradicted(self) -> list[Violation]:
        """The faults ignored of a kind the mesh also honoured (decided at quiescence)."""
        return [v for kind, v in self._ignores if kind in self._honoured]

    def sent(self, d: Delivery) -> None:
        """A new attempt of `d`: a rejection the harness armed is spent by the next call
        to the target."""
        if self._consume(FaultKind.REJECT_NEXT, d.target) is not None:
            d.expect = FaultKind.REJECT_NEXT
        else:
            self._on_way.setdefault(d.target or "", []).append(d)

    def ran(self, d: Delivery, did: str | None, event: TraceEvent) -> None:
        """`d`'s call was offered to its target hub: the callee runs it."""
        d.ran = True
        if d.expect in CALL_TIMEOUTS and d.waiting and self._release(d):
            return  # the mesh spent it on the next call
        if d.expect in CALL_TIMEOUTS and d.waiting and d.sent_at is not None:
            fault = d.expect.value if d.expect is not None else ""
            self._ignored(d.expect, self._monitor.violation(
                f"the harness armed {fault} at {d.target}, but {did}'s call ran at "
                f"the callee {event.time_ms - d.sent_at.time_ms} ms after it was "
                "sent, its caller still waiting: the fault was not honoured",
                d.sent_at, event))
            d.expect = None

    def received(self, d: Delivery, did: str, event: TraceEvent) -> None:
        """`d`'s call reached the callee."""
        _discard(self._on_way.get(d.target or "", []), d)
        if d.expect is FaultKind.REJECT_NEXT:
            self._ignored(d.expect, self._monitor.violation(
                f"the harness armed reject_next at {d.target}, but {did}'s call reached "
                "the callee: a rejected call is held by nobody",
                *d.shown(event)))
            d.expect = None
        # A timeout the harness armed is spent by the call that reaches the callee, an
        # aggregate (which holds one) before a bare one.
        if d.expect is None:
            self._take_timeout(d)

    def _take_timeout(self, d: Delivery, *, armed_before_sent: bool = False) -> None:
        """Spend on `d` an armed aggregate, else a bare timeout, at its target, the oldest
        first: one armed before `d` was sent if there is one (either way of spending takes
        it), else (unless `armed_before_sent`) one armed while `d` was on its way."""
        target, sent = d.target or "", d.sent_at.seq if d.sent_at is not None else None
        found = self._spend_timeout(target, sent)
        passed_over = self._passed_over.get(target, [])
        if found is None and passed_over and sent is not None and passed_over[0][2] <= sent:
            found = passed_over.pop(0)
        if found is None and not armed_before_sent:
            found = self._spend_timeout(target, None)
        if found is None:
            return
        d.expect, d.aggregate, d.armed_at = found
        if sent is not None and (sent < d.armed_at or any(
                d.armed_at <= c.sent_at.seq < sent
                for c in self._on_way.get(target, []) if c.sent_at is not None)):
            # Sent before the arming, or after another call made since it still on its way.
            self._tentative.setdefault(target, []).append(d)

    def _spend_timeout(self, target: str, before: int | None
                       ) -> tuple[FaultKind, bool | None, int] | None:
        """The oldest aggregate, else bare timeout, armed at `target` (before the trace
        event at `before`, if given), spent: its kind, order and where it was armed."""
        aggregates = self._aggregates.get(target, [])
        for i, (timeout_first, left, armed_at) in enumerate(aggregates):
            if before is None or armed_at <= before:
                if left > 1:
                    aggregates[i] = (timeout_first, left - 1, armed_at)
                else:
                    del aggregates[i]
                return FaultKind.AGGREGATE_NEXT, timeout_first, armed_at
        bare = self._consume(FaultKind.TIMEOUT_NEXT, target, armed_before=before)
        return None if bare is None else (FaultKind.TIMEOUT_NEXT, None, bare)

    def _release(self, d: Delivery) -> bool:
        """`d`, holding a timeout tentatively, runs at the callee: the mesh spent that
        timeout on a call made after the arming, if on any. False if `d`'s hold was not
        tentative (the fault is then `d`'s, ignored)."""
        if d.expect is None or not _discard(self._tentative.get(d.target or "", []), d):
            return False
        insort(self._passed_over.setdefault(d.target or "", []),
               (d.expect, d.aggregate, d.armed_at), key=lambda fault: fault[2])
        d.expect, d.aggregate = None, None
        return True

    def _claim(self, d: Delivery) -> None:
        """`d`, received, timed out with no timeout spent on it: the mesh may have spent
        on it one armed before `d` was made that the book gave another call tentatively
        (the module's docstring), still held or already passed over."""
        sent = d.sent_at
        if sent is None:
            return
        holders = [h for h in self._tentative.get(d.target or "", [])
                   if h.armed_at <= sent.seq and h is not d]
        if holders:
            holder = holders[0]
            self._tentative[d.target or ""].remove(holder)
            d.expect, d.aggregate, d.armed_at = holder.expect, holder.aggregate, holder.armed_at
            holder.expect, holder.aggregate = None, None
        else:
            self._take_timeout(d, armed_before_sent=True)

    def failed(self, d: Delivery, did: str, event: TraceEvent) -> None:
        """`d`'s call failed (its caller not yet told it no longer waits): it failed only as
        the harness made it, and a fault spent on it was honoured if it failed as armed."""
        monitor = self._monitor
        _discard(self._on_way.get(d.target or "", []), d)
        _discard(self._tentative.get(d.target or "", []), d)  # it failed: its hold is its own
        if d.expect is None and d.waiting and d.received_at is not None \
                and self._timed_out(d, event):
            self._claim(d)
        if (d.expect is None and d.waiting and not self._stop_asked
                and not self.network_may_fail  # a rejection armed for a call the network failed
                and event.error in monitor.params.resendable_errors and d.received_at is None
                and monitor.harness.posted(did) is not None):  # judged only beside the facts
            # A refusal out of nowhere: the harness armed none, nor began a stop.
            monitor.flag(f"the mesh reports {did}'s attempt {d.attempts - 1} as {event.error}, "
                         f"but the harness armed no rejection at {d.target} and asked for no "
                         "stop: a call fails only as the harness made it",
                         *d.shown(event))
        elif self._unprovoked_timeout(d, did, event):
            monitor.flag(f"{did}'s attempt {d.attempts - 1} timed out, but the harness armed "
                         f"no timeout at {d.target}, never slowed, blocked or removed it and "
                         "asked for no stop: a call fails only as the harness made it",
                         *d.shown(event))
        if d.expect is not None and d.waiting and self._failed_as_armed(d, event):
            monitor.exercised(HONOURED[d.expect])
            self._honoured.add(d.expect)
        self._late_timeout(d, did, event)

    def _late_timeout(self, d: Delivery, did: str, event: TraceEvent) -> None:
        """A caller gives up at its response timeout, no later: a timeout past it is one
        the caller waited out longer than the mesh's own figure."""
        since, timeout = self.timing_since(d), self._monitor.params.response_timeout_ms
        if d.waiting and event.timed_out and since is not None \
                and event.time_ms - since.time_ms > timeout:
            what = "it was sent" if since is d.sent_at else "it reached the callee"
            self._monitor.flag(
                f"{did}'s attempt {d.attempts - 1} timed out {event.time_ms - since.time_ms} "
                f"ms after {what}, later than its response timeout of {timeout} ms: "
                "the caller waited past it", *d.shown(event))

    def slowed_past(self, d: Delivery, end_ms: int) -> bool:
        """Whether `d`'s current call, to a target the harness slowed, may still have been
        on its way at `end_ms` (a mesh that takes the slowdown before the call leaves)."""
        slowed, sent = self._slowed_ms.get(d.target or ""), d.sent_at
        return slowed is not None and sent is not None and sent.time_ms + slowed >= end_ms

    def timing_since(self, d: Delivery) -> TraceEvent | None:
        """An event by which the caller's response timeout was surely running: its call
        (ATTEMPT), as the caller sends at once; over a simulated network, where a request
        may wait for its link to be dialled before it leaves, its arrival at the callee
        (CALL_RECEIVED; None before it arrives)."""
        if Capability.NETWORK in self._monitor.capabilities:
            return d.received_at
        return d.sent_at or d.received_at

    def _unprovoked_timeout(self, d: Delivery, did: str, event: TraceEvent) -> bool:
        """A call timed out (by the mesh's word or the clock) that nothing the harness did
        could make time out: no timeout or aggregate armed and spent on it, its target
        never slowed, blocked or removed, no stop asked for."""
        if d.expect is not None or not d.waiting or self._stop_asked or self.network_may_fail:
            return False
        target = d.target or ""
        if (target in self._held or target in self._removed
                or self._monitor.harness.posted(did) is None):
            return False
        return self._timed_out(d, event)

    def _timed_out(self, d: Delivery, event: TraceEvent) -> bool:
        """Whether `d`'s call failed as a timeout, by the mesh's word or the clock."""
        sent = d.sent_at
        timeout = self._monitor.params.response_timeout_ms
        late = sent is not None and event.time_ms - sent.time_ms >= timeout
        return bool(event.timed_out) or late

    def _failed_as_armed(self, d: Delivery, event: TraceEvent) -> bool:
        """Whether the call the fault was spent on failed the way the fault makes it: a
        timeout (alone or in an aggregate) no sooner than a response timeout after the
        call was sent; a rejection at once, unless the harness had removed the target or
        begun the stop, either of which fails a call by itself."""
        if d.expect is FaultKind.REJECT_NEXT:
            return not self._stop_asked and (d.target or "") not in self._removed
        sent = d.sent_at
        timeout = self._monitor.params.response_timeout_ms
        return sent is not None and event.time_ms - sent.time_ms >= timeout


def _discard(calls: list[Delivery], d: Delivery) -> bool:
    """Remove `d` from `calls` if there: whether it was."""
    if d in calls:
        calls.remove(d)
        return True
    return False


def ignored_and_honoured(evidence: Mapping[str, int], context: Mapping[str, int]
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
