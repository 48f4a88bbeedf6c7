"""The ordinary planted faults (and the dynamic side of the static one) under plain FIFO
timing on a healthy network: each workload, run with the faulty factory and with the clean
`make` under FirstChooser, must show its outcome on the first and not on the second.
Exit 0 when every one does."""

from __future__ import annotations

import sys

from _common import answers_to, of
from invariants.adapter import Fault, FaultKind, FirstChooser, MessageSpec, Route
from invariants.trace import EventKind, MessageClass

from nodemesh import harness_adapter
from nodemesh.harness_adapter import NodeMeshAdapter

REQUEST = MessageSpec("Request")
HEARTBEAT = MessageSpec("Heartbeat", MessageClass.IGNORABLE)


def hubs(mesh: NodeMeshAdapter, *names: str, **kw: int) -> None:
    for name in names:
        mesh.create_hub(name, **kw)


def w_timeout(mesh: NodeMeshAdapter) -> str:  # n01
    hubs(mesh, "h0", "h1")
    mesh.inject(Fault(FaultKind.TIMEOUT_NEXT, "h0"))
    d = mesh.post("client", "h0", REQUEST, route=Route.GRAIN)
    mesh.run_until_idle(60_000)
    return d


def d_timeout(mesh: NodeMeshAdapter, d: str) -> str | None:  # INV4
    failed = [e for e in of(mesh, EventKind.ATTEMPT_FAILED, delivery_id=d) if e.timed_out]
    if failed:
        later = [e for e in of(mesh, EventKind.ATTEMPT, delivery_id=d)
                 if e.seq > failed[0].seq]
        if later:
            received = len(of(mesh, EventKind.CALL_RECEIVED, delivery_id=d))
            return (f"{d} timed out at {failed[0].time_ms} ms and was attempted again at "
                    f"{later[0].time_ms} ms; it reached the callee {received} times")
    return None


def w_unvouched(mesh: NodeMeshAdapter) -> str:  # n03
    hubs(mesh, "h0", "h1")
    d = mesh.post("client", "h0", REQUEST, identity=None, route=Route.MONOLITH)
    mesh.run_until_idle(60_000)
    return d


def d_unvouched(mesh: NodeMeshAdapter, d: str) -> str | None:  # INV1
    if of(mesh, EventKind.REJECTED, delivery_id=d) and answers_to(mesh, d):
        return f"{d} rejected (no identity) and answered {answers_to(mesh, d)[0].error}"
    return None


def w_flood(mesh: NodeMeshAdapter) -> list[str]:  # n04
    hubs(mesh, "h0", "h1", watermark=3)
    mesh.inject(Fault(FaultKind.BLOCK_HUB, "h0", duration_ms=1000))
    posts = [mesh.post("client", "h0", HEARTBEAT, route=Route.DIRECT) for _ in range(6)]
    mesh.run_until_idle(60_000)
    return posts


def d_watermark(mesh: NodeMeshAdapter, posts: list[str]) -> str | None:  # INV3
    over = [e for e in of(mesh, EventKind.ENQUEUED, hub="h0")
            if e.delivery_id in posts and (e.depth or 0) > 3]
    if over:
        return (f"heartbeat {over[0].delivery_id} enqueued at h0 at depth {over[0].depth} "
                "(watermark 3)")
    return None


def w_give_up(mesh: NodeMeshAdapter) -> int:  # n06
    hubs(mesh, "h0", "h1")
    mesh.inject(Fault(FaultKind.SLOW_DESTINATION, "h0", duration_ms=1500))
    mesh.post("client", "h0", REQUEST, route=Route.MONOLITH)
    mesh.advance(10)
    mesh.stop(graceful=True)
    mesh.advance(100)
    gave_up = mesh.now_ms()
    mesh.stop(graceful=False)
    mesh.run_until_idle(60_000)
    return gave_up


def d_give_up(mesh: NodeMeshAdapter, gave_up: int) -> str | None:  # INV5
    released = of(mesh, EventKind.STOP_HOLD_RELEASED)
    if released and released[0].time_ms > gave_up:
        return (f"the hold was released at {released[0].time_ms} ms, though the host gave "
                f"up on the stop at {gave_up} ms")
    return None


def w_ghost(mesh: NodeMeshAdapter) -> str:  # n07
    hubs(mesh, "h0", "h1")
    d = mesh.post("client", "ghost", REQUEST, route=Route.MONOLITH)
    mesh.run_until_idle(60_000)
    return d


def d_twice(mesh: NodeMeshAdapter, d: str) -> str | None:  # INV7
    answers = answers_to(mesh, d)
    if len(answers) > 1:
        return f"{d} answered {len(answers)} times ({', '.join(str(a.error) for a in answers)})"
    return None


CASES = [
    ("n01", w_timeout, d_timeout),
    ("n03", w_unvouched, d_unvouched),
    ("n04", w_flood, d_watermark),
    ("n06", w_give_up, d_give_up),
    ("n07", w_ghost, d_twice),
]


def main() -> int:
    failed = 0
    for name, workload, detect in CASES:
        factory = getattr(harness_adapter, f"bug_{name}")
        bugged = factory(FirstChooser())
        shown = detect(bugged, workload(bugged))
        clean_mesh = harness_adapter.make(FirstChooser())
        clean = detect(clean_mesh, workload(clean_mesh))
        ok = shown is not None and clean is None
        failed += not ok
        print(f"{name}: faulty: {shown or 'not shown'}; clean: {clean or 'not shown'}"
              f" -> {'ok' if ok else 'NOT PROVEN'}")
    print(f"{len(CASES) - failed} of {len(CASES)} shown under FIFO, none on the clean mesh")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
