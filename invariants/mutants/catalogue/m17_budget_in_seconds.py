"""M17 budget-in-seconds: the stop hold's budget is read as seconds, so it lasts 30 ms.

Pre-fix shape (a unit slip): `self.mesh.scheduler.after(self.budget_ms // 1000, ...)` in
place of `after(self.budget_ms, ...)` in `RoutingQuiescenceParticipant.hold_until_drained`,
so a graceful stop is released "budget" long before the 30 s with accepted legs still in
flight. Obligation (INV5): "graceful stops held with legs in flight" (held until every leg
landed or the 30 s budget expired).
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M17",
    slug="budget-in-seconds",
    shape="the stop hold's budget expires after 30 ms, legs still in flight",
    path="quiescence.py",
    site="RoutingQuiescenceParticipant.hold_until_drained",
    before="self.mesh.scheduler.after(self.budget_ms, self._budget_spent)",
    after="self.mesh.scheduler.after(self.budget_ms // 1000, self._budget_spent)",
    kills=("INV5",),
    seeds=("stop-with-legs", "stop-budget-expiry"),
)
