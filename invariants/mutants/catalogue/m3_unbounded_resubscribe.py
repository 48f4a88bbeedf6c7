"""M3 unbounded-resubscribe: the subscribe primitive retries a missing target forever.

Pre-fix shape (the phantom `_Activity` storm): `if self.attempt < self.retries or
cause == ErrorType.NOT_FOUND.value:`, so a NotFound never spends the budget.
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M3",
    slug="unbounded-resubscribe",
    shape="subscribe retries forever on NotFound",
    path="subscribe.py",
    site="BoundedSubscription._retry_or_terminate",
    before="if self.attempt < self.retries:",
    after="if self.attempt < self.retries or cause == ErrorType.NOT_FOUND.value:",
    kills=("INV2",),
    seeds=("missing-target",),
)
