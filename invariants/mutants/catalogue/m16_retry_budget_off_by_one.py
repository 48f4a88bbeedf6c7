"""M16 retry-budget-off-by-one: a rejected delivery is re-sent 7 times, not 6.

Pre-fix shape (an off-by-one in the budget): `attempt <= self.router.retries` in place of
`attempt < self.router.retries` in `GrainDeliveryOperation._failed`, so a delivery the
callee keeps rejecting is called 8 times. Obligation: "rejected deliveries re-sent to the
budget" (6 retries, 7 calls, never attempted more).
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M16",
    slug="retry-budget-off-by-one",
    shape="a rejected delivery gets 7 retries (8 calls)",
    path="grain.py",
    site="GrainDeliveryOperation._failed",
    before="attempt < self.router.retries",
    after="attempt <= self.router.retries",
    kills=("INV4",),
    seeds=("rejection-retry",),
)
