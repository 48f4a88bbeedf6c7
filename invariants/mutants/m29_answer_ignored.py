"""M29 answer-ignored: a subscription drops every answer while it is active.

Pre-fix shape (the state test inverted, `is` for `is not`): `if self.state is
SubscriptionState.ACTIVE or request_id != self.pending_request:` in
`BoundedSubscription.on_answer`, so the answer a live target sends is thrown away and the
subscription times out and resubscribes until its retries are spent, as if the target
did not exist. Obligation (INV2): "subscriptions to a live target answered".
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import Mutant, MutationCodemod

_NOT_ACTIVE = m.Comparison(
    left=m.Attribute(value=m.Name("self"), attr=m.Name("state")),
    comparisons=[m.ComparisonTarget(operator=m.IsNot())],
)


class AnswerIgnored(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("on_answer")))
    @m.leave(_NOT_ACTIVE)
    def is_for_is_not(
        self, original_node: cst.Comparison, updated_node: cst.Comparison
    ) -> cst.Comparison:
        self.hit()
        (target,) = updated_node.comparisons
        return updated_node.with_changes(comparisons=[target.with_changes(operator=cst.Is())])


MUTANT = Mutant(
    id="M29",
    slug="answer-ignored",
    shape="a subscription throws away the answer of a live target",
    path="subscribe.py",
    site="BoundedSubscription.on_answer",
    target="if self.state is not SubscriptionState.ACTIVE or request_id != self.pending_request:",
    kills=("INV2",),
    writes="if self.state is SubscriptionState.ACTIVE or",
    removes="if self.state is not",
    seeds=("live-target",),
    codemod=AnswerIgnored,
)
