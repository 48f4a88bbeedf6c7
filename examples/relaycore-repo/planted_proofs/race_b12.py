"""b12: a subscription's answer lands in the instant its attempt times out.

The target is slowed so the answer to attempt 0 lands at exactly 4000 ms, the instant the
subscription's 4 s timeout fires (a timer armed at 0 ms against a link hop armed at
3998 ms: either may land first). FIFO lands the older timer first but handles the answer
in that same iteration, before the subscription wakes: it is answered in time. Holding
the answer until the subscription has moved into its backoff, a legal order, the late
answer is taken as "in its timeout's own millisecond" and the subscription reported
answered, while its backoff still runs: it sends attempt 1 after it was answered (INV2,
closed subscriptions watched).
"""

from __future__ import annotations

from _common import Factory, main
from invariants.adapter import Chooser, Fault, FaultKind
from invariants.trace import EventKind

from relaycore.harness_adapter import bug_b12


def program(chooser: Chooser, factory: Factory) -> list[str]:
    mesh = factory(chooser)
    mesh.create_hub("h0")
    mesh.inject(Fault(FaultKind.SLOW_DESTINATION, "h0", duration_ms=4000 - 4))
    sid = mesh.subscribe("client", "h0", retries=5)
    mesh.run_until_idle(600_000)
    found, closed = [], None
    for e in mesh.trace():
        if e.subscription_id != sid:
            continue
        if e.kind in (EventKind.SUBSCRIBE_ANSWERED, EventKind.SUBSCRIBE_TERMINATED):
            closed = closed or e
        elif e.kind is EventKind.SUBSCRIBE_ATTEMPT and closed is not None:
            found.append(f"seq {e.seq} @ {e.time_ms} ms: subscription {sid} sent attempt "
                         f"{e.attempt} after it was {closed.kind.value} at {closed.time_ms} ms")
    return found


if __name__ == "__main__":
    main("b12", program, bug_b12, instant="t=4000 ms")
