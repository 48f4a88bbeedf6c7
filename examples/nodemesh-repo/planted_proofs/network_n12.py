"""n12 (network, INV7): a post to a missing hub whose request is held on the callee's links
past its response timeout is answered `TimedOut`, and again `NotFound` when the callee's
late reply arrives."""

from __future__ import annotations

from _common import answers_to, main, prove_network
from invariants.adapter import Fault, FaultKind, MessageSpec, Route

from nodemesh.harness_adapter import NodeMeshAdapter, bug_n12, make

REQUEST = MessageSpec("Request")


def run(mesh: NodeMeshAdapter, hold: bool) -> str:
    for hub in ("h0", "h1", "h2"):
        mesh.create_hub(hub)
    # A hub on the node where 'ghost' is addressed, so the link there is up.
    near = next(h for h in ("h0", "h1", "h2") if mesh.node_of(h) == mesh.node_of("ghost"))
    mesh.post("client", near, REQUEST, route=Route.MONOLITH)
    mesh.advance(100)
    if hold:
        mesh.inject(Fault(FaultKind.HOLD_LINKS, "ghost", duration_ms=3000))
    d = mesh.post("client", "ghost", REQUEST, route=Route.MONOLITH)
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
