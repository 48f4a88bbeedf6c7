"""f08 (ordinary): a subscription to a missing hub, its subscriber's turn held past the timeout."""
from _common import prove

prove("f08", "INV2", [("block", {"to": "client", "duration_ms": 2050}),
                      ("subscribe", {"subscriber": "client", "to": "ghost"}),
                      ("advance", {"ms": 20000, "schedule": []})])
