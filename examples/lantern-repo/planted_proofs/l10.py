"""l10 (ordinary): a graceful stop while a call to a slowed hub is in flight."""

from __future__ import annotations

import sys

from common import Route, advance, init, prove

PROGRAM = [init(), advance(5),
           ("slow", {"to": "h1", "duration_ms": 1500}),
           ("user", {"sender": "peer", "to": "h1", "route": Route.GRAIN, "count": 1}),
           advance(10),
           ("stop", {"graceful": True}),
           advance(5000)]

if __name__ == "__main__":
    sys.exit(0 if prove("l10", "INV5", PROGRAM, controls={}) else 1)
