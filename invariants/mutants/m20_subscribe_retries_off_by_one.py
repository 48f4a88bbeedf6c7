"""M20 subscribe-retries-off-by-one: a subscription to a missing target retries 6 times.

Pre-fix shape (an off-by-one in the bound): `if self.attempt <= self.retries:` in place of
`if self.attempt < self.retries:` in `BoundedSubscription._retry_or_terminate`, so a
subscription makes N+2 attempts before it terminates. Obligation (INV2): "subscriptions
that spent their N retries" (at most N+1 attempts, N = 5).
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import Mutant, MutationCodemod

_BOUND = m.Comparison(
    left=m.Attribute(value=m.Name("self"), attr=m.Name("attempt")),
    comparisons=[m.ComparisonTarget(
        operator=m.LessThan(),
        comparator=m.Attribute(value=m.Name("self"), attr=m.Name("retries")),
    )],
)


class SubscribeRetriesOffByOne(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("_retry_or_terminate")))
    @m.leave(_BOUND)
    def one_more(
        self, original_node: cst.Comparison, updated_node: cst.Comparison
    ) -> cst.Comparison:
        self.hit()
        (target,) = updated_node.comparisons
        return updated_node.with_changes(
            comparisons=[target.with_changes(operator=cst.LessThanEqual())]
        )


MUTANT = Mutant(
    id="M20",
    slug="subscribe-retries-off-by-one",
    shape="a subscription makes N+2 attempts",
    path="subscribe.py",
    site="BoundedSubscription._retry_or_terminate",
    target="if self.attempt < self.retries:",
    kills=("INV2",),
    writes="if self.attempt <= self.retries:",
    removes="if self.attempt < self.retries:",
    seeds=("missing-target",),
    codemod=SubscribeRetriesOffByOne,
)
