"""INV6: a wide legitimate fan-out is never dropped by the per-key breaker (seed 004, #1200).

The breaker key is (sender, target, message type, payload identity); without an identity
it is the 3-tuple. A message may be dropped only if its own key carried more than the
threshold (2000) in a window (1 s), or tripped within the cooldown (2 s) before. So for
every DROPPED (and BREAKER_TRIPPED) event, the trace must show more than `threshold`
messages POSTED to that hub's intake with the same key in the preceding window plus
cooldown (an upper bound on what any tumbling-window breaker could have counted). One
sender talking to one target about 5,000 different things must see 0 drops.

Obligations (what each reads), with the evidence each counts:
- "fan-out posts past the threshold kept": a post whose routing 3-tuple carried more than
  the threshold in the window while its own 4-part key did not (the case a key without
  the identity would drop) must not be dropped (POSTED, DROPPED; harness facts: posts).
- "drops checked against their key": every DROPPED / BREAKER_TRIPPED is held to the count
  of its own key (a genuine storm on one key may be dropped).

The payload identity of a post is the one the harness gave it (harness facts), not the
one the mesh reports: a POSTED that reports another identity for a harness post is a
violation naming both, and the breaker key is counted with the harness's identity.
"""

from __future__ import annotations

from collections import deque
from types import MappingProxyType

from invariants.checks.harness_facts import Posted
from invariants.checks.monitor import Monitor, check_function
from invariants.checks.params import DEFAULT_PARAMS, CheckParams
from invariants.trace import EventKind, TraceEvent

BreakerKey = tuple[str | None, str | None, str | None, str | None]

KEPT = "fan-out posts past the threshold kept"
DROPS = "drops checked against their key"


def breaker_key(event: TraceEvent) -> tuple[str | None, BreakerKey]:
    """The hub and the 4-part key (identity None: the 3-tuple fallback)."""
    return event.hub, (event.sender, event.target, event.message_type, event.diagnostic_key)


class FanoutNotDropped(Monitor):
    check_id = "INV6"
    title = "a wide fan-out is never dropped"
    obligations = MappingProxyType({
        KEPT: "no post went past the breaker threshold on its (sender, target, type) with "
        "distinct payload identities: no fan-out wider than breaker_threshold was posted "
        "within one window (is the `fanout` family on?)",
        DROPS: "the breaker never dropped nor tripped: no storm on one key went past "
        "breaker_threshold (is the `storm` family on, and is breaker_threshold the mesh's?)",
    })

    def __init__(self, params: CheckParams = DEFAULT_PARAMS) -> None:
        super().__init__(params)
        self._arrivals: dict[tuple[str | None, BreakerKey], deque[int]] = {}
        self._tuples: dict[tuple[str | None, BreakerKey], deque[int]] = {}  # identity left out

    def _arrived(
        self, table: dict[tuple[str | None, BreakerKey], deque[int]],
        key: tuple[str | None, BreakerKey], now: int,
    ) -> deque[int]:
        horizon = now - self.params.breaker_window_ms - self.params.breaker_cooldown_ms
        arrivals = table.setdefault(key, deque())
        while arrivals and arrivals[0] <= horizon:
            arrivals.popleft()
        return arrivals

    def _key(self, event: TraceEvent) -> tuple[str | None, BreakerKey]:
        """The key of the post as the harness made it, where the harness made it."""
        posted = self.harness.posted(event.delivery_id)
        if posted is None or posted.target != event.hub:
            return breaker_key(event)
        if event.kind is EventKind.POSTED and event.diagnostic_key != posted.diagnostic_key:
            self._lost_identity(event, posted)
        return event.hub, (posted.sender, posted.target, posted.message_type,
                           posted.diagnostic_key)

    def _lost_identity(self, event: TraceEvent, posted: Posted) -> None:
        self.flag(
            f"the mesh reports {event.delivery_id} at {event.hub} with payload identity "
            f"{event.diagnostic_key}, but the harness posted it with {posted.diagnostic_key}: "
            "a breaker keyed on what the mesh reports counts the wrong key",
            event,
        )

    def observe(self, event: TraceEvent) -> None:
        kind = event.kind
        if kind not in (EventKind.POSTED, EventKind.DROPPED, EventKind.BREAKER_TRIPPED):
            return
        if kind is EventKind.DROPPED:
            event = self.facts.complete(event)
        key = self._key(event)
        arrivals = self._arrived(self._arrivals, key, event.time_ms)
        if kind is EventKind.POSTED:
            arrivals.append(event.time_ms)
            hub, (sender, target, message_type, _identity) = key
            wide = self._arrived(self._tuples, (hub, (sender, target, message_type, None)),
                                 event.time_ms)
            wide.append(event.time_ms)
            threshold = self.params.breaker_threshold
            if len(wide) > threshold >= len(arrivals):
                self.exercised(KEPT)
            return
        self.exercised(DROPS)
        if len(arrivals) <= self.params.breaker_threshold:
            sender, target, message_type, identity = key[1]
            what = "dropped" if kind is EventKind.DROPPED else "tripped on"
            self.flag(
                f"breaker {what} {event.delivery_id} ({sender}->{target} {message_type} "
                f"identity {identity}) though its key had only {len(arrivals)} message(s) "
                f"in the window (threshold {self.params.breaker_threshold})",
                event,
            )


check = check_function(FanoutNotDropped)
