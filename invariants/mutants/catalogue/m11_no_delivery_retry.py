"""M11 no-delivery-retry: the non-idempotent delivery is never retried.

Pre-fix shape (the blunt cure for #1172): the `if is_resendable(exc) and attempt < ...:`
retry is gone from `GrainDeliveryOperation._failed`, so every failed attempt is answered at
once; a rejected call, which the callee refused and holds nowhere, is never re-sent.
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M11",
    slug="no-delivery-retry",
    shape="the delivery retry removed: a rejected call is answered, never re-sent",
    path="grain.py",
    site="GrainDeliveryOperation._failed",
    before="if is_resendable(exc) and attempt < self.router.retries:",
    after="",
    kills=("INV4",),
    seeds=("rejection-retry",),
)
