"""f02 (network: crash): a storm on a hub made with threshold 8, after its node restarted."""
from _common import prove

from invariants.adapter import Route

INIT8 = {"breaker_thresholds": (8, 8, 8)}
CRASH = [("crash", {"to": "h0", "duration_ms": 100}), ("advance", {"ms": 500, "schedule": []})]
STORM = [("storm", {"edges": False, "route": Route.DIRECT, "to": "h0"})]
prove("f02", "INV6", CRASH + STORM, healthy=[("advance", {"ms": 600, "schedule": []}), *STORM],
      init=INIT8)
