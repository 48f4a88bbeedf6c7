"""b16: a grain post and a non-graceful stop asked for in the same instant.

FIFO lands the call's first attempt first (the post was made first), so the stop's last
stage finds the call running and cuts it. Landing the stop first, a legal order (two
calls from outside the loop land in either order), the stop drains the call's leg before
its first attempt ran, the attempt cannot be cut, and it runs after STOP_COMPLETED: an
ATTEMPT, a CALL_RECEIVED and the packaged frame at the callee after the stop (INV5).
"""

from __future__ import annotations

from _common import Factory, after_stop, main
from invariants.adapter import Chooser, MessageSpec, Route

from relaycore.harness_adapter import bug_b16


def program(chooser: Chooser, factory: Factory) -> list[str]:
    mesh = factory(chooser)
    mesh.create_hub("h0")
    mesh.post("client", "h0", MessageSpec("Charge"), route=Route.GRAIN)
    mesh.stop(graceful=False)
    mesh.run_until_idle(600_000)
    return after_stop(mesh.trace())


if __name__ == "__main__":
    main("b16", program, bug_b16, instant="t=0 ms")
