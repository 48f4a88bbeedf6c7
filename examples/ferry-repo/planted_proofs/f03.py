"""f03 (network: crash): a call that timed out, then its callee's node crashes and restarts."""
from _common import prove

from invariants.adapter import Route

CALL = [("advance", {"ms": 50, "schedule": []}),
        ("timeout", {"to": "h0", "count": 1}),
        ("user", {"count": 1, "route": Route.GRAIN, "sender": "client", "to": "h0"}),
        ("advance", {"ms": 4100, "schedule": []})]
CRASH = [("crash", {"to": "h0", "duration_ms": 100})]
REST = [("advance", {"ms": 10000, "schedule": []})]
prove("f03", "INV4", CALL + CRASH + REST, healthy=CALL + REST)
