"""b16 (race, INV3 watermark): a routed burst of chatter to a hub at its watermark; a piece
of chatter joins the queue at a depth (as the trace counts it: ENQUEUED joins, HANDLED leaves)
at the watermark, only when the schedule lands it after the dispatcher took a parcel but before
that parcel's handler ran. Under FIFO every landing of the burst comes before the dispatcher."""

from __future__ import annotations

from _common import main, prove
from switchboard.harness_adapter import bug_b16, make

from invariants.adapter import MessageSpec, Route
from invariants.trace import EventKind, MessageClass

HEARTBEAT = MessageSpec("Heartbeat", MessageClass.IGNORABLE)
WATERMARK = 2


def scenario(mesh):
    mesh.create_hub("h0", watermark=WATERMARK)
    posts = [mesh.post("client", "h0", HEARTBEAT, route=Route.MONOLITH) for _ in range(4)]
    mesh.advance(10)
    return posts


def detect(mesh, posts):
    depth = 0
    for e in mesh.trace():
        if e.hub != "h0":
            continue
        if e.kind is EventKind.ENQUEUED:
            if e.delivery_id in posts and depth >= WATERMARK:
                return (f"chatter {e.delivery_id} enqueued at h0 at depth {depth} "
                        f"(watermark {WATERMARK}) at {e.time_ms} ms")
            depth += 1
        elif e.kind is EventKind.HANDLED:
            depth -= 1
    return None


if __name__ == "__main__":
    main(prove("b16", bug_b16, scenario, detect, seeds=range(300), control=make))
