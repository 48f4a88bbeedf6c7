"""b05: a routed post and a non-graceful stop asked for in the same instant.

FIFO lands the post's carry first (it was made first): the frame is on its link when the
stop's last stage cuts the leg. Landing the stop first, a legal order (two calls from
outside the loop land in either order), the stop cuts the leg before the frame left, and
the frame still leaves and lands after STOP_COMPLETED (INV5).
"""

from __future__ import annotations

from _common import Factory, after_stop, main
from invariants.adapter import Chooser, MessageSpec, Route

from relaycore.harness_adapter import bug_b05


def program(chooser: Chooser, factory: Factory) -> list[str]:
    mesh = factory(chooser)
    mesh.create_hub("h0")
    mesh.post("client", "h0", MessageSpec("Order"), route=Route.MONOLITH)
    mesh.stop(graceful=False)
    mesh.run_until_idle(600_000)
    return after_stop(mesh.trace())


if __name__ == "__main__":
    main("b05", program, bug_b05, instant="t=0 ms")
