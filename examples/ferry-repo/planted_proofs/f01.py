"""f01 (network: crash): a hub the harness removed, its node crashed and restarted; a post to it."""
from _common import prove

from invariants.adapter import Route

REMOVE = [("remove", {"to": "h1"}), ("advance", {"ms": 10, "schedule": []})]
CRASH = [("crash", {"to": "h1", "duration_ms": 100}), ("advance", {"ms": 500, "schedule": []})]
POST = [("user", {"count": 1, "route": Route.MONOLITH, "sender": "client", "to": "h1"}),
        ("advance", {"ms": 100, "schedule": []})]
prove("f01", "INV7", REMOVE + CRASH + POST,
      healthy=[*REMOVE, ("advance", {"ms": 600, "schedule": []}), *POST])
