"""M20 subscribe-retries-off-by-one: a subscription to a missing target retries 6 times.

Pre-fix shape (an off-by-one in the bound): `if self.attempt <= self.retries:` in place of
`if self.attempt < self.retries:` in `BoundedSubscription._retry_or_terminate`, so a
subscription makes N+2 attempts before it terminates. Obligation (INV2): "subscriptions
that spent their N retries" (at most N+1 attempts, N = 5).
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M20",
    slug="subscribe-retries-off-by-one",
    shape="a subscription makes N+2 attempts",
    path="subscribe.py",
    site="BoundedSubscription._retry_or_terminate",
    before="if self.attempt < self.retries:",
    after="if self.attempt <= self.retries:",
    kills=("INV2",),
    seeds=("missing-target",),
)
