"""l05 (race): two direct posts of one sender to one hub, landing in the other order."""

from __future__ import annotations

import sys

from common import Route, advance, init, prove

POSTS = [("user", {"sender": "peer", "to": "h0", "route": Route.DIRECT, "count": 1}),
         ("user", {"sender": "peer", "to": "h0", "route": Route.DIRECT, "count": 1})]


def program(schedule: list[int]) -> list:
    return [init(), advance(5), *POSTS, advance(10, schedule=schedule), advance(100)]


if __name__ == "__main__":
    sys.exit(0 if prove("l05", "INV7", program([1]), controls={"FIFO schedule": program([])}) else 1)
