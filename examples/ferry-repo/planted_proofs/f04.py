"""f04 (network: crash): a node crashed and rebuilt after the stop, then a routed post from it."""
from _common import prove

from invariants.adapter import Route

STOP = [("stop", {"graceful": True}), ("advance", {"ms": 100, "schedule": []})]
CRASH = [("crash", {"to": "h0", "duration_ms": 100}), ("advance", {"ms": 500, "schedule": []})]
POST = [("user", {"count": 1, "route": Route.MONOLITH, "sender": "peer", "to": "h1"}),
        ("advance", {"ms": 100, "schedule": []})]
prove("f04", "INV5", STOP + CRASH + POST,
      healthy=[*STOP, ("advance", {"ms": 600, "schedule": []}), *POST])
