"""M12 holds-non-graceful: the Active-stage participant holds every stop.

Pre-fix shape (the first cut of the #2638 hold): `on_active_stop` has no `if not
self.silo.graceful: done(); return` branch, so a non-graceful stop (the host's token
already cancelled) still waits for the routing gauge to drain.
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M12",
    slug="holds-non-graceful",
    shape="a non-graceful stop still holds at Active",
    path="quiescence.py",
    site="RoutingQuiescenceParticipant.on_active_stop",
    before="if not self.silo.graceful:",
    after="",
    kills=("INV5",),
    seeds=("stop-non-graceful",),
)
