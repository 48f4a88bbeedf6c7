"""f07 (ordinary): heartbeats flooding a blocked hub whose watermark is 4."""
from _common import prove

from invariants.adapter import Route

INIT4 = {"watermarks": (4, 4, 4)}
prove("f07", "INV3", [("block", {"to": "h0", "duration_ms": 1000}),
                      ("ignorable", {"count": 6, "route": Route.DIRECT, "sender": "client",
                                     "to": "h0"}),
                      ("advance", {"ms": 2000, "schedule": []})], init=INIT4)
