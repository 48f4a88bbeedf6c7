"""INV4's judgement of the call faults the harness armed: a call fails only as the harness
made it, and a fault spent on a call is honoured (which call holds which fault is the book's,
`inv4_fault_book`)."""

from __future__ import annotations

from collections.abc import Mapping

from invariants.adapter import Capability, FaultKind
from invariants.capabilities import NETWORK_FAULTS
from invariants.checks.harness_facts import HarnessFact, Injected, StopAsked
from invariants.checks.inv4_calls import Delivery
from invariants.checks.inv4_fault_book import FaultBook
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
    """The call faults the harness armed (their `FaultBook`) and the targets it disturbed,
    judged call by call for `monitor` (which records the verdicts and the evidence)."""

    def __init__(self, monitor: Monitor) -> None:
        self._monitor = monitor
        self._book = FaultBook()
        # Call faults the mesh honoured at least once, and the violations of those it
        # ignored: a kind ignored every time is one the mesh does not model (its
        # obligations go unexercised); a kind honoured only sometimes is a bug.
        self._honoured: set[FaultKind] = set()
        self._ignores: list[tuple[FaultKind, Violation]] = []
        self._removed: set[str] = set()  # targets the harness removed
        self._held: set[str] = set()  # and those it slowed or blocked: a call may time out
        # Each target's slowdowns, in the order armed: (when, how long calls there take).
        self._slowdowns: dict[str, list[tuple[int, int]]] = {}
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
                self._slowdowns.setdefault(fact.target, []).append(
                    (fact.time_ms, fact.duration_ms))
        elif fact.kind in NETWORK_FAULTS:
            self._network_faults = True
        self._book.arm(fact)

    def _ignored(self, kind: FaultKind, violation: Violation) -> None:
        self._ignores.append((kind, violation))
        self._monitor.saw(IGNORED[kind])

    def _caller_may_be_gone(self, sent: TraceEvent) -> bool:
        """Whether a crash since the call left may have taken its caller (the harness
        does not know which node that was): a caller gone never gives up in the trace."""
        crashed_at = self._monitor.harness.crashed_at
        return crashed_at is not None and crashed_at >= sent.time_ms

    def contradicted(self) -> list[Violation]:
        """The faults ignored of a kind the mesh also honoured (decided at quiescence)."""
        return [v for kind, v in self._ignores if kind in self._honoured]

    def sent(self, d: Delivery) -> None:
        """A new attempt of `d`: a rejection the harness armed is spent by the next call
        to the target."""
        self._book.sent(d)

    def ran(self, d: Delivery, did: str | None, event: TraceEvent) -> None:
        """`d`'s call was offered to its target hub: the callee runs it."""
        d.ran = True
        self._book.ran(d)
        if d.expect in CALL_TIMEOUTS and d.waiting and self._book.release(d):
            return  # the mesh spent it on the next call
        if d.expect in CALL_TIMEOUTS and d.waiting and d.sent_at is not None \
                and not self._caller_may_be_gone(d.sent_at):
            fault = d.expect.value if d.expect is not None else ""
            self._ignored(d.expect, self._monitor.violation(
                f"the harness armed {fault} at {d.target}, but {did}'s call ran at "
                f"the callee {event.time_ms - d.sent_at.time_ms} ms after it was "
                "sent, its caller still waiting: the fault was not honoured",
                d.sent_at, event))
            d.expect = None

    def received(self, d: Delivery, did: str, event: TraceEvent) -> None:
        """`d`'s call reached the callee."""
        self._book.arrived(d)
        if d.expect is FaultKind.REJECT_NEXT:
            self._ignored(d.expect, self._monitor.violation(
                f"the harness armed reject_next at {d.target}, but {did}'s call reached "
                "the callee: a rejected call is held by nobody",
                *d.shown(event)))
            d.expect = None
        # A timeout the harness armed is spent by the call that reaches the callee, an
        # aggregate (which holds one) before a bare one.
        if d.expect is None:
            self._book.take_timeout(d)

    def failed(self, d: Delivery, did: str, event: TraceEvent) -> None:
        """`d`'s call failed (its caller not yet told it no longer waits): it failed only as
        the harness made it, and a fault spent on it was honoured if it failed as armed."""
        monitor = self._monitor
        self._book.ended(d)
        if d.expect is None and d.waiting and d.received_at is not None \
                and self._timed_out(d, event):
            self._book.claim(d)
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
        on its way at `end_ms` (a mesh that takes the slowdown before the call leaves, or
        at the callee as it arrives): held by the slowdown in force when it was sent, or
        by one armed after that, before `end_ms`. One armed later held no call of the run."""
        sent = d.sent_at
        if sent is None:
            return False
        slowdowns = self._slowdowns.get(d.target or "", [])
        in_force = [s for s in slowdowns if s[0] <= sent.time_ms][-1:]
        later = [s for s in slowdowns if sent.time_ms < s[0] <= end_ms]
        return any(max(sent.time_ms, armed) + ms >= end_ms for armed, ms in in_force + later)

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
