"""l06 (race): a key's window filled, then a routed post of the key landing as that window closes."""

from __future__ import annotations

import sys

from common import Route, advance, init, prove

BASE = [init(), advance(5),
        ("ignorable", {"sender": "peer", "to": "h0", "route": Route.MONOLITH, "count": 1}),  # opens the link
        ("user", {"sender": "peer", "to": "h0", "route": Route.DIRECT, "count": 100}),  # fills the window
        advance(499),
        ("user", {"sender": "peer", "to": "h0", "route": Route.MONOLITH, "count": 1})]  # lands at 505 ms


def program(ties: list[int]) -> list:
    return [*BASE, advance(10, ties=ties), advance(100)]


if __name__ == "__main__":
    sys.exit(0 if prove("l06", "INV6", program([1, 1, 1]), controls={"FIFO schedule": program([])}) else 1)
