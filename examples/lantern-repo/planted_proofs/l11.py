"""l11 (ordinary): one key's storm, with one post of another sender on the same target, type and identity."""

from __future__ import annotations

import sys

from common import Route, advance, init, prove

PROGRAM = [init(), advance(5), ("storm", {"to": "h0", "route": Route.DIRECT}), advance(100)]

if __name__ == "__main__":
    sys.exit(0 if prove("l11", "INV6", PROGRAM, controls={}) else 1)
