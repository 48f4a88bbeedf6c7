"""INV6: a wide legitimate fan-out is never dropped by the per-key breaker (seed 004, #1200).

The breaker key is (sender, target, message type, payload identity); without an identity
it is the 3-tuple. A message may be dropped only if its own key carried more than the
threshold (2000) in a window (1 s), or tripped within the cooldown (2 s) before. So for
every DROPPED (and BREAKER_TRIPPED) event, the trace must show more than `threshold`
messages POSTED to that hub's intake with the same key in the preceding window plus
cooldown (an upper bound on what any tumbling-window breaker could have counted). One
sender talking to one target about 5,000 different things must see 0 drops.
"""

from __future__ import annotations

from collections import deque

from invariants.checks.monitor import Monitor, check_function
from invariants.checks.params import DEFAULT_PARAMS, CheckParams
from invariants.trace import EventKind, TraceEvent

BreakerKey = tuple[str | None, str | None, str | None, str | None]



def breaker_key(event: TraceEvent) -> tuple[str | None, BreakerKey]:
    """The hub and the 4-part key (identity None: the 3-tuple fallback)."""
    return event.hub, (event.sender, event.target, event.message_type, event.diagnostic_key)


class FanoutNotDropped(Monitor):
    check_id = "INV6"
    title = "a wide fan-out is never dropped"

    def __init__(self, params: CheckParams = DEFAULT_PARAMS) -> None:
        super().__init__(params)
        self._arrivals: dict[tuple[str | None, BreakerKey], deque[int]] = {}

    def observe(self, event: TraceEvent) -> None:
        kind = event.kind
        if kind not in (EventKind.POSTED, EventKind.DROPPED, EventKind.BREAKER_TRIPPED):
            return
        if kind is EventKind.DROPPED:
            event = self.facts.complete(event)
        key = breaker_key(event)
        horizon = event.time_ms - self.params.breaker_window_ms - self.params.breaker_cooldown_ms
        arrivals = self._arrivals.setdefault(key, deque())
        while arrivals and arrivals[0] <= horizon:
            arrivals.popleft()
        if kind is EventKind.POSTED:
            arrivals.append(event.time_ms)
            return
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
