"""n05 (race, INV4): a re-send that leaves in the very instant another call on the same link
times out is dropped unsent, so it times out in turn although nothing held it; only when
the schedule lands the re-send's backoff behind the timeout's work."""

from __future__ import annotations

from _common import OrderChooser, main, of, prove_race
from invariants.adapter import Fault, FaultKind, MessageSpec, Route
from invariants.trace import EventKind

from nodemesh.harness_adapter import NodeMeshAdapter, bug_n05, make

REQUEST = MessageSpec("Request")


def scenario(mesh: NodeMeshAdapter) -> tuple[str, str]:
    for hub in ("h0", "h1", "h2", "h3"):
        mesh.create_hub(hub)  # h0 and h3 on n1
    mesh.post("client", "h0", REQUEST, route=Route.GRAIN)  # the link gw -> n1 is up
    mesh.advance(100)
    mesh.inject(Fault(FaultKind.TIMEOUT_NEXT, "h0"))
    held = mesh.post("client", "h0", REQUEST, route=Route.GRAIN)  # times out at 2100 ms
    mesh.advance(1948)
    mesh.inject(Fault(FaultKind.REJECT_NEXT, "h3"))
    refused = mesh.post("client", "h3", REQUEST, route=Route.GRAIN)  # re-sent at 2100 ms
    mesh.run_until_idle(60_000)
    return held, refused


def detect(mesh: NodeMeshAdapter, posts: tuple[str, str]) -> str | None:
    _, refused = posts
    timed_out = [e for e in of(mesh, EventKind.ATTEMPT_FAILED, delivery_id=refused)
                 if e.timed_out]
    if timed_out:
        sent = [e for e in of(mesh, EventKind.ATTEMPT, delivery_id=refused)
                if e.attempt == timed_out[0].attempt]
        received = of(mesh, EventKind.CALL_RECEIVED, delivery_id=refused,
                      attempt=timed_out[0].attempt)
        return (f"{refused}'s attempt {timed_out[0].attempt}, sent at {sent[0].time_ms} ms, "
                f"timed out at {timed_out[0].time_ms} ms (received by the callee "
                f"{len(received)} times); no timeout was armed for it")
    return None


if __name__ == "__main__":
    main(prove_race("n05", bug_n05, make, scenario, detect,
                    choosers=[OrderChooser(s) for s in range(200)]))
