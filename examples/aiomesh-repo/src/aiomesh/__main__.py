"""`python -m aiomesh demo`: a short run of the mesh on the stock event loop.

Every figure of the mesh is shrunk twentyfold (one mesh millisecond lasts 50 µs of the
loop's clock), so the run takes well under a second of real time.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable

from aiomesh.envelope import Kind, Message
from aiomesh.mesh import Mesh
from aiomesh.observer import Recorder

SECONDS_PER_MS = 0.00005


async def demo() -> list[str]:
    """Run the demo; the lines it prints, the last saying whether all went as it should."""
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    notes = Recorder(lambda: round((loop.time() - t0) / SECONDS_PER_MS))
    mesh = Mesh(observer=notes, seconds_per_ms=SECONDS_PER_MS)
    lines: list[str] = []
    wrong: list[str] = []

    def expect(what: str, ok: bool) -> None:
        lines.append(f"  {'ok ' if ok else 'BAD'} {what}")
        if not ok:
            wrong.append(what)

    async def until(done: Callable[[], bool], within_ms: int) -> bool:
        """Wait for a condition, looking once per mesh millisecond, at most `within_ms`."""
        deadline = mesh.now_ms() + within_ms
        while not done():
            if mesh.now_ms() > deadline:
                return False
            await asyncio.sleep(mesh.seconds(1))
        return True

    for address in ("client", "orders", "billing"):
        mesh.hub(address)
    lines.append("aiomesh demo: hubs client, orders, billing")

    routed = mesh.post("client", "orders", Message("PlaceOrder", key="order/1"))
    expect(f"routed request {routed} handled at orders",
           await until(lambda: bool(notes.of("handled", hub="orders", delivery_id=routed)),
                       1_000))

    mesh.faults.rejects["billing"] = 2
    call = mesh.post("orders", "billing", Message("Charge", key="order/1"), route="call")
    await until(lambda: bool(notes.of("leg_ended", delivery_id=call)), 5_000)
    attempts = len(notes.of("attempt", delivery_id=call))
    expect(f"call {call}: refused twice, re-sent, applied once ({attempts} attempts)",
           attempts == 3 and mesh.hubs["billing"].effects.get(call) == 1)

    mesh.faults.timeouts["billing"] = 1
    late = mesh.post("orders", "billing", Message("Charge", key="order/2"), route="call")
    await until(lambda: bool(notes.of("failure_emitted", answers=late))
                and mesh.hubs["billing"].effects.get(late) == 1, 20_000)
    answered = notes.of("failure_emitted", answers=late)
    expect(f"call {late}: timed out once, not re-sent, the sender answered "
           f"{answered[0]['error'] if answered else 'nothing'}",
           len(notes.of("attempt", delivery_id=late)) == 1 and len(answered) == 1
           and mesh.hubs["billing"].effects.get(late) == 1)

    rejected = mesh.post("client", "orders", Message("PlaceOrder"), identity=None,
                         route="direct")
    await until(lambda: bool(notes.of("rejected", delivery_id=rejected)), 1_000)
    expect(f"post {rejected} with no identity rejected, nobody answered",
           len(notes.of("rejected", delivery_id=rejected)) == 1
           and not notes.of("failure_emitted", answers=rejected))

    live = mesh.subscribe("client", "orders")
    missing = mesh.subscribe("client", "nowhere", retries=3)
    await until(lambda: all(mesh.subscriptions[s].done for s in (live, missing)), 20_000)
    ends = notes.of("subscribe_terminated", subscription_id=missing)
    expect(f"subscription {live} to orders answered",
           bool(notes.of("subscribe_answered", subscription_id=live)))
    expect(f"subscription {missing} to nowhere ended after "
           f"{len(notes.of('subscribe_attempt', subscription_id=missing))} attempts "
           f"({ends[0]['reason'] if ends else 'still open'})",
           len(ends) == 1 and len(notes.of("subscribe_attempt", subscription_id=missing)) == 4)

    mesh.slow_down("billing", 300)
    held = mesh.post("orders", "billing", Message("Refund", Kind.USER, "order/3"))
    mesh.stop()
    await mesh.stopped_event()
    released = notes.of("stop_hold_released")
    expect(f"graceful stop held for {held}, released "
           f"{released[0]['reason'] if released else 'never'}, completed",
           bool(released) and released[0]["reason"] == "drained"
           and bool(notes.of("handled", hub="billing", delivery_id=held))
           and bool(notes.of("stop_completed")))
    await mesh.aclose()
    lines.append(f"{len(notes.notes)} events in {notes.clock()} mesh ms; "
                 + ("all as expected" if not wrong else f"{len(wrong)} unexpected"))
    return lines


def main(argv: list[str]) -> int:
    if argv != ["demo"]:
        print("usage: python -m aiomesh demo", file=sys.stderr)
        return 2
    lines = asyncio.run(demo())
    print("\n".join(lines))
    return 0 if lines[-1].endswith("all as expected") else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
