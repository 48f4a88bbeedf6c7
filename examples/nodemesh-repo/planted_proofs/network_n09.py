"""n09 (network, INV7): a node rebuilt after a crash numbers its messages from the start
again, so a post made after the restart carries the id of one made before it."""

from __future__ import annotations

from _common import main, prove_network
from invariants.adapter import Fault, FaultKind, MessageSpec, Route

from nodemesh.harness_adapter import NodeMeshAdapter, bug_n09, make

REQUEST = MessageSpec("Request")


def run(mesh: NodeMeshAdapter, crash: bool) -> tuple[str, str]:
    for hub in ("h0", "h1", "h2"):
        mesh.create_hub(hub)  # h0 on n1, h1 on n2
    first = mesh.post("h0", "h1", REQUEST, route=Route.MONOLITH)
    mesh.advance(50)
    if crash:
        mesh.inject(Fault(FaultKind.CRASH_NODE, "h0", duration_ms=100))
    mesh.advance(500)
    second = mesh.post("h0", "h1", REQUEST, route=Route.MONOLITH)
    mesh.run_until_idle(60_000)
    return first, second


def detect(mesh: NodeMeshAdapter, posts: tuple[str, str]) -> str | None:
    first, second = posts
    if first == second:
        return f"two posts from h0, before and after its node's restart, both carry id {first}"
    return None


if __name__ == "__main__":
    main(prove_network("n09", bug_n09, make, lambda m: run(m, True), detect,
                       without=lambda m: run(m, False)))
