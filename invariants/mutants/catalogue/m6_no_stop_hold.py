"""M6 no-stop-hold: the Active-stage stop participant returns at once.

Pre-fix shape (#2638): `on_active_stop` calls `done()` instead of
`self.hold_until_drained(done)`, so grains deactivate with route legs still in flight.
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M6",
    slug="no-stop-hold",
    shape="the Active participant returns at once",
    path="quiescence.py",
    site="RoutingQuiescenceParticipant.on_active_stop",
    before="self.hold_until_drained(done)",
    after="done()",
    kills=("INV5",),
    seeds=("stop-with-legs",),
)
