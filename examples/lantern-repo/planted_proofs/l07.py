"""l07 (ordinary): an anonymous post routed to a hub, which its identity guard refuses."""

from __future__ import annotations

import sys

from common import Route, advance, init, prove

PROGRAM = [init(), advance(5),
           ("anonymous", {"sender": "peer", "to": "h1", "route": Route.MONOLITH, "message_class": "user"}),
           advance(100)]

if __name__ == "__main__":
    sys.exit(0 if prove("l07", "INV1", PROGRAM, controls={}) else 1)
