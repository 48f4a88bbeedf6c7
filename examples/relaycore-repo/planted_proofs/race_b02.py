"""b02: a grain call lands at its callee in the instant its caller's response timeout fires.

The callee is slowed so the call lands at exactly 8000 ms, the instant the caller's 8 s
timeout fires (the timeout armed at 0 ms, the call's hop at 7998 ms: either may land
first). FIFO lands the older timer first: the caller has timed out by the time the callee
looks at the call. Landing the call first, a legal order, the callee finds its caller's
deadline reached and refuses the call as "held by nobody"; the refusal reaches the caller
while it still waits, and the caller re-sends a call that failed a whole response timeout
after it was sent, as if the harness had rejected it (INV4: a refusal no reject_next
explains; a re-send after a response timeout).
"""

from __future__ import annotations

from _common import Factory, main
from invariants.adapter import Chooser, Fault, FaultKind, MessageSpec, Route
from invariants.trace import EventKind

from relaycore.harness_adapter import bug_b02


def program(chooser: Chooser, factory: Factory) -> list[str]:
    mesh = factory(chooser)
    mesh.create_hub("h0")
    mesh.inject(Fault(FaultKind.SLOW_DESTINATION, "h0", duration_ms=8000 - 2))
    did = mesh.post("client", "h0", MessageSpec("Charge"), route=Route.GRAIN)
    mesh.run_until_idle(600_000)
    trace = mesh.trace()
    found = [f"seq {e.seq} @ {e.time_ms} ms: {did}'s attempt {e.attempt} failed {e.error} "
             f"(timed_out={e.timed_out}) though the harness armed no rejection"
             for e in trace
             if e.kind is EventKind.ATTEMPT_FAILED and e.delivery_id == did and not e.timed_out]
    attempts = [e for e in trace if e.kind is EventKind.ATTEMPT and e.delivery_id == did]
    if len(attempts) > 1:
        found.append(f"{did} attempted {len(attempts)} times (at "
                     f"{', '.join(str(e.time_ms) for e in attempts)} ms)")
    return found


if __name__ == "__main__":
    main("b02", program, bug_b02, instant="t=8000 ms")
