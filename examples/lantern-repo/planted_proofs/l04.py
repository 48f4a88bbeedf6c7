"""l04 (network): a storm trips a key at h0, h0's node crashes and is rebuilt, the key posts again."""

from __future__ import annotations

import sys

from common import Route, advance, init, prove

STORM = ("storm", {"to": "h0", "route": Route.DIRECT})
CRASH = ("crash", {"to": "h0", "duration_ms": 100})


def program(*, crash: bool) -> list:
    return [init(), advance(5), STORM, advance(1), *([CRASH] if crash else []), advance(200), STORM,
            advance(100)]


if __name__ == "__main__":
    sys.exit(0 if prove("l04", "INV6", program(crash=True),
                        controls={"without the crash": program(crash=False)}) else 1)
