"""`python -m relaycore demo`: a short run of the relay on the stock asyncio loop."""

from __future__ import annotations

import asyncio
import sys
from collections import Counter

from relaycore.config import QUICK
from relaycore.frames import Frame
from relaycore.relay import Relay

USAGE = "usage: python -m relaycore demo"


async def demo() -> Counter[str]:
    """Routed posts, calls, watches and a graceful stop; returns what the relay reported."""
    seen: Counter[str] = Counter()

    def count(kind: str, **fields: object) -> None:
        del fields
        seen[kind] += 1

    relay = Relay(asyncio.get_running_loop(), QUICK, telemetry=count)
    orders = relay.add_node("orders")
    relay.add_node("billing")
    placed: list[str] = []

    def on_order(frame: Frame, fields: dict[str, object]) -> None:
        del fields
        placed.append(frame["id"])

    orders.handlers["PlaceOrder"] = on_order
    for n in range(3):
        relay.post("shop", "orders", "PlaceOrder", key=f"order/{n}")
    relay.post("shop", "billing", "Charge", path="call")
    relay.post("shop", "orders", "Heartbeat", cls="ignorable", path="direct")
    relay.post("shop", "archive", "Store")  # no such node: answered NotFound
    relay.post("shop", "orders", "PlaceOrder", identity=None)  # no identity: rejected
    live = relay.watch("shop", "billing")
    missing = relay.watch("shop", "ghost", retries=2)
    await asyncio.gather(*(w.task for w in (live, missing) if w.task is not None))
    await relay.stop(graceful=True)
    print(f"orders placed: {len(placed)}; watches: {live.outcome}, {missing.outcome}")
    print("events:", ", ".join(f"{kind} {n}" for kind, n in sorted(seen.items())))
    return seen


def main(argv: list[str]) -> int:
    if argv != ["demo"]:
        print(USAGE, file=sys.stderr)
        return 2
    seen = asyncio.run(demo())
    return 0 if seen["stop_completed"] == 1 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
