"""`python -m switchboard demo`: the switchboard on the stock asyncio loop, then a graceful stop."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections import Counter
from typing import Any

from .board import Switchboard
from .journal import Journal
from .parcels import Klass, Note, Parcel
from .subscriptions import State


async def demo() -> dict[str, int]:
    events: Counter[str] = Counter()

    def count(event: str, fields: dict[str, Any]) -> None:
        events[event] += 1

    board = Switchboard(asyncio.get_running_loop(), journal=Journal(count),
                        latency={("portal", "orders"): 5})
    board.start()
    for address in ("portal", "orders", "billing"):
        board.open_inbox(address)
    board.open_inbox("gossip", watermark=10)
    board.pause("gossip", 50)  # its turns held while a burst of chatter arrives

    def new(sender: str, target: str, note: Note, badge: str | None = "demo") -> Parcel:
        return Parcel(board.next_id("p"), sender, target, badge, note)

    board.post_direct(new("portal", "orders", Note("PlaceOrder", topic="order/1")))
    board.send(new("portal", "orders", Note("PlaceOrder", topic="order/2")))
    board.call(new("orders", "billing", Note("Charge", topic="order/2")))
    board.send(new("portal", "nowhere", Note("Lookup")))           # answered NotFound
    board.post_direct(new("portal", "orders", Note("Peek"), badge=None))  # refused, unanswered
    for n in range(30):
        board.post_direct(new("portal", "gossip", Note("Heartbeat", Klass.CHATTER, f"n{n}")))
    live = board.subscribe("portal", "billing")
    missing = board.subscribe("portal", "ghost")

    while board.subscriptions.state_of(live) is not State.ANSWERED or (
            board.subscriptions.state_of(missing) is not State.ENDED):
        await asyncio.sleep(0.01)
    await board.stop(graceful=True)
    await board.aclose()
    return dict(sorted(events.items()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m switchboard")
    parser.add_argument("command", choices=["demo"])
    parser.parse_args(argv)
    events = asyncio.run(demo())
    for name, count in events.items():
        print(f"{name:>16}  {count}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
