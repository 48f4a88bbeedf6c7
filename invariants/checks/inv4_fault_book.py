"""INV4's book of the call faults the harness armed at each target: which call holds which.

A rejection is spent by the next call made to its target. A timeout is spent by one of two
calls, as the mesh takes its faults: the first to reach the callee after the arming (the
reference, spending at the callee), or the first made after it (a mesh asking `point()` as
each call leaves). They differ when a call was on its way as the timeout was armed, or
when calls overtake each other on the way. The book gives the fault to the first and moves
it when the mesh shows it chose the other: the first runs while its caller waits
(`release`), or another times out (`claim`). Whether the mesh honoured what a call holds is
`inv4_faults`' to judge."""

from __future__ import annotations

from bisect import insort

from invariants.adapter import FaultKind
from invariants.checks.harness_facts import Injected
from invariants.checks.inv4_calls import Delivery

# A timeout a call may hold: its kind (a bare timeout or an aggregate), the aggregate's
# order (timeout first?), and the trace position of its arming.
Held = tuple[FaultKind, bool | None, int]


class FaultBook:
    """The call faults armed and unspent, and the calls that hold them."""

    def __init__(self) -> None:
        # Faults the harness armed, unspent: the trace position of each arming, oldest first.
        self._armed: dict[tuple[FaultKind, str], list[int]] = {}
        # Target -> the aggregates armed there, unspent, in arming order: (timeout first?,
        # how many, trace position of the arming), kept as counts since the harness states
        # a count, not the calls.
        self._aggregates: dict[str, list[tuple[bool, int, int]]] = {}
        # Target -> the calls on their way to it (sent, not yet received nor failed).
        self._on_way: dict[str, list[Delivery]] = {}
        # Target -> the calls that reached it holding no timeout, neither run nor failed
        # yet: a mesh spending timeouts as calls leave may have given one to such a call.
        self._unheld: dict[str, list[Delivery]] = {}
        # Target -> the calls holding a timeout the mesh may have spent on another call
        # made after the arming (the module's docstring).
        self._tentative: dict[str, list[Delivery]] = {}
        # Target -> the timeouts those calls ran past, oldest first: only a call made
        # after the arming may still have spent one.
        self._passed_over: dict[str, list[Held]] = {}

    def arm(self, fact: Injected) -> None:
        """A call fault the harness armed (other faults are not the book's)."""
        if fact.kind is FaultKind.AGGREGATE_NEXT and fact.count > 0:
            self._aggregates.setdefault(fact.target, []).append(
                (fact.timeout_first, fact.count, fact.seq))
        elif fact.kind in (FaultKind.REJECT_NEXT, FaultKind.TIMEOUT_NEXT):
            self._armed.setdefault((fact.kind, fact.target), []).extend([fact.seq] * fact.count)

    def sent(self, d: Delivery) -> None:
        """A new attempt of `d`: a rejection armed at its target is spent on it; else it is
        on its way, and a timeout is spent on it when it arrives."""
        if self._consume(FaultKind.REJECT_NEXT, d.target) is not None:
            d.expect = FaultKind.REJECT_NEXT
        else:
            self._on_way.setdefault(d.target or "", []).append(d)

    def arrived(self, d: Delivery) -> None:
        """`d`'s call reached the callee: no longer on its way, holding nothing yet."""
        _discard(self._on_way.get(d.target or "", []), d)
        self._unheld.setdefault(d.target or "", []).append(d)

    def ran(self, d: Delivery) -> None:
        """`d`'s call runs at the callee: the mesh did not stall it."""
        _discard(self._unheld.get(d.target or "", []), d)

    def ended(self, d: Delivery) -> None:
        """`d`'s call failed: neither on its way nor tentatively holding (its hold, if any,
        is its own)."""
        _discard(self._on_way.get(d.target or "", []), d)
        _discard(self._unheld.get(d.target or "", []), d)
        _discard(self._tentative.get(d.target or "", []), d)

    def take_timeout(self, d: Delivery, *, armed_before_sent: bool = False) -> None:
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
        _discard(self._unheld.get(target, []), d)
        others = [*self._on_way.get(target, []), *self._unheld.get(target, [])]
        if sent is not None and (sent < d.armed_at or any(
                d.armed_at <= c.sent_at.seq < sent for c in others if c.sent_at is not None)):
            # Sent before the arming, or after another call made since that is still on its
            # way, or reached the callee holding nothing and has not run.
            self._tentative.setdefault(target, []).append(d)

    def release(self, d: Delivery) -> bool:
        """`d`, holding a timeout tentatively, runs at the callee: the mesh spent that
        timeout on a call made after the arming, if on any. False if `d`'s hold was not
        tentative (the fault is then `d`'s, ignored)."""
        if d.expect is None or not _discard(self._tentative.get(d.target or "", []), d):
            return False
        insort(self._passed_over.setdefault(d.target or "", []),
               (d.expect, d.aggregate, d.armed_at), key=lambda fault: fault[2])
        d.expect, d.aggregate = None, None
        return True

    def claim(self, d: Delivery) -> None:
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
            self.take_timeout(d, armed_before_sent=True)

    def _consume(self, kind: FaultKind, target: str | None, *, armed_before: int | None = None
                 ) -> int | None:
        """Spend the oldest fault of `kind` armed at `target` (if `armed_before`, only one
        armed before the trace event at that position): where it was armed, or None."""
        armed = self._armed.get((kind, target or ""))
        if not armed or (armed_before is not None and armed[0] > armed_before):
            return None
        return armed.pop(0)

    def _spend_timeout(self, target: str, before: int | None) -> Held | None:
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


def _discard(calls: list[Delivery], d: Delivery) -> bool:
    """Remove `d` from `calls` if there: whether it was."""
    if d in calls:
        calls.remove(d)
        return True
    return False
