"""l03 (network): peer's node answers a post to a missing hub, crashes, is rebuilt, answers another."""

from __future__ import annotations

import sys

from common import Route, advance, init, prove

MISS = ("user", {"sender": "peer", "to": "h0/gone", "route": Route.MONOLITH, "count": 1})
CRASH = ("crash", {"to": "h0", "duration_ms": 100})


def program(*, crash: bool) -> list:
    return [init(), advance(5), MISS, advance(50), *([CRASH] if crash else []), advance(500),
            MISS, advance(100)]


if __name__ == "__main__":
    sys.exit(0 if prove("l03", "INV7", program(crash=True),
                        controls={"without the crash": program(crash=False)}) else 1)
