"""M3 unbounded-resubscribe: the subscribe primitive retries a missing target forever.

Pre-fix shape (the phantom `_Activity` storm): `if self.attempt < self.retries or
cause == ErrorType.NOT_FOUND.value:`, so a NotFound never spends the budget.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m
from libcst.codemod.visitors import AddImportsVisitor

from invariants.mutants.base import Mutant, MutationCodemod

_BUDGET_LEFT = m.Comparison(
    left=m.Attribute(value=m.Name("self"), attr=m.Name("attempt")),
    comparisons=[
        m.ComparisonTarget(
            operator=m.LessThan(),
            comparator=m.Attribute(value=m.Name("self"), attr=m.Name("retries")),
        )
    ],
)


class UnboundedResubscribe(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("_retry_or_terminate")))
    @m.leave(m.If(test=_BUDGET_LEFT))
    def retry_not_found(self, original_node: cst.If, updated_node: cst.If) -> cst.If:
        self.hit()
        AddImportsVisitor.add_needed_import(self.context, "reference_impl.messages", "ErrorType")
        not_found = cst.parse_expression("cause == ErrorType.NOT_FOUND.value")
        test = cst.BooleanOperation(left=updated_node.test, operator=cst.Or(), right=not_found)
        return updated_node.with_changes(test=test)


MUTANT = Mutant(
    id="M3",
    slug="unbounded-resubscribe",
    shape="subscribe retries forever on NotFound",
    path="subscribe.py",
    site="BoundedSubscription._retry_or_terminate",
    target="if self.attempt < self.retries:",
    kills=("INV2",),
    writes="if self.attempt < self.retries or cause == ErrorType.NOT_FOUND.value:",
    removes="if self.attempt < self.retries:",
    seeds=("missing-target",),
    codemod=UnboundedResubscribe,
)
