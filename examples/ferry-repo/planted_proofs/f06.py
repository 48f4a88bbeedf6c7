"""f06 (race): two direct posts of one sender to one hub; the second lands first.

The posts land in the run's first drive, so the order is set with the run's schedule
strategy (PCT change point: the 5th ordering decision takes its second option)."""
from _common import prove

from invariants.adapter import Route

POSTS = [("user", {"count": 2, "route": Route.DIRECT, "sender": "client", "to": "h0"}),
         ("advance", {"ms": 10, "schedule": []})]
prove("f06", "INV7", POSTS, init={"schedule": ("pct", ((4, 1),))},
      healthy=POSTS, healthy_init={"schedule": ("scripts",)})
