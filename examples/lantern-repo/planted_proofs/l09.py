"""l09 (ordinary): heartbeats flooding a hub whose turn is held, past its watermark of 4."""

from __future__ import annotations

import sys

from common import Route, advance, init, prove

PROGRAM = [init(watermarks=(4, None, None)), advance(5),
           ("block", {"to": "h0", "duration_ms": 1000}),
           ("flood", {"to": "h0", "count": 12, "route": Route.DIRECT}),
           advance(2000)]

if __name__ == "__main__":
    sys.exit(0 if prove("l09", "INV3", PROGRAM, controls={}) else 1)
