"""M11 no-delivery-retry: the non-idempotent delivery is never retried.

Pre-fix shape (the blunt cure for #1172): the `if is_resendable(exc) and attempt < ...:`
retry is gone from `GrainDeliveryOperation._failed`, so every failed attempt is answered at
once; a rejected call, which the callee refused and holds nowhere, is never re-sent.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import Mutant, MutationCodemod

_RETRY = m.If(
    test=m.BooleanOperation(
        operator=m.And(), left=m.Call(func=m.Name("is_resendable"))
    )
)


class NoDeliveryRetry(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("_failed")))
    @m.leave(_RETRY)
    def drop_retry(self, original_node: cst.If, updated_node: cst.If) -> cst.RemovalSentinel:
        self.hit()
        return cst.RemoveFromParent()


MUTANT = Mutant(
    id="M11",
    slug="no-delivery-retry",
    shape="the delivery retry removed: a rejected call is answered, never re-sent",
    path="grain.py",
    site="GrainDeliveryOperation._failed",
    target="if is_resendable(exc) and attempt < self.router.retries: ...",
    kills=("INV4",),
    writes="",
    removes="if is_resendable(exc) and attempt < self.router.retries:",
    seeds=("rejection-retry",),
    codemod=NoDeliveryRetry,
)
