"""l01 (network): the node hosting `peer` (and h0) crashes and is rebuilt between two calls from peer."""

from __future__ import annotations

import sys

from common import Route, advance, init, prove

CALL = ("user", {"sender": "peer", "to": "h1", "route": Route.MONOLITH, "count": 1})
CRASH = ("crash", {"to": "h0", "duration_ms": 100})


def program(*, crash: bool) -> list:
    return [init(), advance(5), CALL, advance(50), *([CRASH] if crash else []), advance(500),
            CALL, advance(100)]


if __name__ == "__main__":
    sys.exit(0 if prove("l01", "INV5", program(crash=True),
                        controls={"without the crash": program(crash=False)}) else 1)
