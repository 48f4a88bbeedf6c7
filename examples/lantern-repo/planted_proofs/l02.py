"""l02 (network): the node hosting h1 crashes while a routed post to it is on a pooled link."""

from __future__ import annotations

import sys

from common import Route, advance, init, prove

CALL = ("user", {"sender": "peer", "to": "h1", "route": Route.MONOLITH, "count": 1})
CRASH = ("crash", {"to": "h1", "duration_ms": 100})


def program(*, crash: bool) -> list:
    return [init(), advance(5), CALL, advance(50), *([CRASH] if crash else []), CALL, advance(1000)]


if __name__ == "__main__":
    sys.exit(0 if prove("l02", "INV7", program(crash=True),
                        controls={"without the crash": program(crash=False)}) else 1)
