"""n11 (network, INV4): a post whose call timed out while its callee's node was down (a
crash mid-call) is answered `Unavailable`, an error that tells its sender to keep trying,
instead of the terminal `TimedOut`."""

from __future__ import annotations

from _common import answers_to, main, of, prove_network
from invariants.adapter import Fault, FaultKind, MessageSpec, Route
from invariants.trace import EventKind

from nodemesh.harness_adapter import NodeMeshAdapter, bug_n11, make

REQUEST = MessageSpec("Request")


def run(mesh: NodeMeshAdapter, crash: bool) -> str:
    mesh.create_hub("h0")
    mesh.create_hub("h1")
    mesh.post("client", "h0", REQUEST, route=Route.GRAIN)  # the link is up
    mesh.advance(100)
    if crash:
        mesh.inject(Fault(FaultKind.SLOW_DESTINATION, "h0", duration_ms=500))
    else:  # the same call timing out on a healthy network
        mesh.inject(Fault(FaultKind.TIMEOUT_NEXT, "h0"))
    d = mesh.post("client", "h0", REQUEST, route=Route.GRAIN)
    mesh.advance(100)
    if crash:
        mesh.inject(Fault(FaultKind.CRASH_NODE, "h0", duration_ms=3000))
    mesh.run_until_idle(60_000)
    return d


def detect(mesh: NodeMeshAdapter, d: str) -> str | None:
    timed_out = [e for e in of(mesh, EventKind.ATTEMPT_FAILED, delivery_id=d) if e.timed_out]
    wrong = [a for a in answers_to(mesh, d) if a.error != "TimedOut"]
    if timed_out and wrong:
        return (f"{d} timed out at {timed_out[0].time_ms} ms and was answered "
                f"{wrong[0].error} at {wrong[0].time_ms} ms")
    return None


if __name__ == "__main__":
    main(prove_network("n11", bug_n11, make, lambda m: run(m, True), detect,
                       without=lambda m: run(m, False)))
