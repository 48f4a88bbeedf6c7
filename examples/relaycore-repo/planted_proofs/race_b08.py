"""b08: a subscription's answer lands in the instant its attempt times out.

The same tie as b12 (the target slowed so the answer to attempt 0 lands at exactly 4000
ms, the instant the 4 s timeout fires). FIFO handles the answer before the subscription
wakes. Landing the answer after the timeout has cancelled the attempt's future but before
the subscription let go of it (a legal order: the answer held behind the timeout's work),
the subscriber's handler resolves a future that is already cancelled and raises: a
HANDLER_FAULTED for the relay's own SubscribeAck, no payload the harness asked to raise
(INV7, handlers raised only where the harness asked).
"""

from __future__ import annotations

from _common import Factory, main
from invariants.adapter import Chooser, Fault, FaultKind
from invariants.trace import EventKind

from relaycore.harness_adapter import bug_b08


def program(chooser: Chooser, factory: Factory) -> list[str]:
    mesh = factory(chooser)
    mesh.create_hub("h0")
    mesh.inject(Fault(FaultKind.SLOW_DESTINATION, "h0", duration_ms=4000 - 4))
    mesh.subscribe("client", "h0", retries=5)
    mesh.run_until_idle(600_000)
    return [f"seq {e.seq} @ {e.time_ms} ms: the handler of {e.delivery_id} "
            f"({e.message_type}) at {e.hub} raised {e.error}"
            for e in mesh.trace() if e.kind is EventKind.HANDLER_FAULTED]


if __name__ == "__main__":
    main("b08", program, bug_b08, instant="t=4000 ms")
