"""n12 (network, INV7): a call refused by its callee whose refusal is held on the callee's
links past the caller's response timeout is answered `TimedOut`, and again `Rejected`
when the late refusal arrives."""

from __future__ import annotations

from _common import answers_to, main, prove_network
from invariants.adapter import Fault, FaultKind, MessageSpec, Route

from nodemesh.harness_adapter import NodeMeshAdapter, bug_n12, make

REQUEST = MessageSpec("Request")


def run(mesh: NodeMeshAdapter, hold: bool) -> str:
    mesh.create_hub("h0")
    mesh.create_hub("h1")
    mesh.post("client", "h0", REQUEST, route=Route.GRAIN)  # the link gw -> n1 is up
    mesh.advance(100)
    if hold:
        mesh.inject(Fault(FaultKind.HOLD_LINKS, "h0", duration_ms=3000))
    mesh.inject(Fault(FaultKind.REJECT_NEXT, "h0"))
    d = mesh.post("client", "h0", REQUEST, route=Route.GRAIN)
    mesh.run_until_idle(60_000)
    return d


def detect(mesh: NodeMeshAdapter, d: str) -> str | None:
    answers = answers_to(mesh, d)
    if len(answers) > 1:
        return (f"{d} answered {len(answers)} times ("
                + ", ".join(f"{a.error} at {a.time_ms} ms" for a in answers) + ")")
    return None


if __name__ == "__main__":
    main(prove_network("n12", bug_n12, make, lambda m: run(m, True), detect,
                       without=lambda m: run(m, False)))
