"""b11 (race, INV7 order): one sender's two direct posts to a blocked hub, made at different
instants, handled out of the order made, only when the schedule lands the later one first."""

from __future__ import annotations

from _common import main, of, prove
from switchboard.harness_adapter import bug_b11, make

from invariants.adapter import Fault, FaultKind, MessageSpec, Route
from invariants.trace import EventKind

REQUEST = MessageSpec("Request")


def scenario(mesh):
    mesh.create_hub("h0")
    mesh.inject(Fault(FaultKind.BLOCK_HUB, "h0", duration_ms=1000))
    first = mesh.post("client", "h0", REQUEST, route=Route.DIRECT)
    mesh.advance(10)
    second = mesh.post("client", "h0", REQUEST, route=Route.DIRECT)
    mesh.advance(2000)
    return first, second


def detect(mesh, posts):
    first, second = posts
    handled = [e.delivery_id for e in of(mesh, EventKind.HANDLED, hub="h0")]
    if first in handled and second in handled and handled.index(second) < handled.index(first):
        return f"{second} (posted at 10 ms) handled before {first} (posted at 0 ms) at h0"
    return None


if __name__ == "__main__":
    main(prove("b11", bug_b11, scenario, detect, seeds=range(300), control=make))
