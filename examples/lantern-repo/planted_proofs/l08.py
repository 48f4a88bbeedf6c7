"""l08 (ordinary): a subscription to a missing hub, retried to its bound."""

from __future__ import annotations

import sys

from common import advance, init, prove

PROGRAM = [init(), advance(5), ("subscribe", {"subscriber": "peer", "to": "h0/gone"}), advance(10000)]

if __name__ == "__main__":
    sys.exit(0 if prove("l08", "INV2", PROGRAM, controls={}) else 1)
