"""l12 (ordinary): a call refused three times before it goes through."""

from __future__ import annotations

import sys

from common import Route, advance, init, prove

PROGRAM = [init(), advance(5),
           ("reject", {"to": "h1", "count": 3}),
           ("user", {"sender": "peer", "to": "h1", "route": Route.GRAIN, "count": 1}),
           advance(5000)]

if __name__ == "__main__":
    sys.exit(0 if prove("l12", "INV4", PROGRAM, controls={}) else 1)
