"""M16 retry-budget-off-by-one: a rejected delivery is re-sent 7 times, not 6.

Pre-fix shape (an off-by-one in the budget): `attempt <= self.router.retries` in place of
`attempt < self.router.retries` in `GrainDeliveryOperation._failed`, so a delivery the
callee keeps rejecting is called 8 times. Obligation: "rejected deliveries re-sent to the
budget" (6 retries, 7 calls, never attempted more).
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import Mutant, MutationCodemod

_BUDGET = m.ComparisonTarget(
    operator=m.LessThan(),
    comparator=m.Attribute(
        value=m.Attribute(value=m.Name("self"), attr=m.Name("router")), attr=m.Name("retries")
    ),
)


class RetryBudgetOffByOne(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("_failed")))
    @m.leave(_BUDGET)
    def one_more(
        self, original_node: cst.ComparisonTarget, updated_node: cst.ComparisonTarget
    ) -> cst.ComparisonTarget:
        self.hit()
        return updated_node.with_changes(operator=cst.LessThanEqual())


MUTANT = Mutant(
    id="M16",
    slug="retry-budget-off-by-one",
    shape="a rejected delivery gets 7 retries (8 calls)",
    path="grain.py",
    site="GrainDeliveryOperation._failed",
    target="attempt < self.router.retries",
    kills=("INV4",),
    writes="if is_resendable(exc) and attempt <= self.router.retries:",
    removes="if is_resendable(exc) and attempt < self.router.retries:",
    seeds=("rejection-retry",),
    codemod=RetryBudgetOffByOne,
)
