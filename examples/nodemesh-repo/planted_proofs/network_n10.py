"""n10 (network, INV7): a post whose peer cannot be dialled (cut off by a partition) is
answered twice, once as the dial fails and once more as its leg ends."""

from __future__ import annotations

from _common import answers_to, main, prove_network
from invariants.adapter import Fault, FaultKind, MessageSpec, Route

from nodemesh.harness_adapter import NodeMeshAdapter, bug_n10, make

REQUEST = MessageSpec("Request")


def run(mesh: NodeMeshAdapter, partition: bool) -> str:
    mesh.create_hub("h0")
    mesh.create_hub("h1")
    if partition:
        mesh.inject(Fault(FaultKind.PARTITION_NODE, "h0", duration_ms=3000))
    d = mesh.post("client", "h0", REQUEST, route=Route.MONOLITH)
    mesh.run_until_idle(60_000)
    return d


def detect(mesh: NodeMeshAdapter, d: str) -> str | None:
    answers = answers_to(mesh, d)
    if len(answers) > 1:
        return (f"{d} answered {len(answers)} times ("
                + ", ".join(f"{a.error} at {a.time_ms} ms" for a in answers) + ")")
    return None


if __name__ == "__main__":
    main(prove_network("n10", bug_n10, make, lambda m: run(m, True), detect,
                       without=lambda m: run(m, False)))
