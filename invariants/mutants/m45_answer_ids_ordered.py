"""M45 answer-ids-ordered: a subscription matches an answer to its request by ordering ids.

Pre-fix shape (request ids taken to rise with time): `request_id < self.pending_request`
in place of `!=` in `BoundedSubscription.on_answer`. An answer that lands in the backoff,
when no request is pending, compares a string with None and raises TypeError in the
subscriber's handler, which the pump logs and passes over; an earlier request's late answer
is taken for the pending one's whenever its id sorts after it. Obligation (INV7): "handlers
raised only where the harness asked", caught by the `answer-in-backoff` seed program.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import Mutant, MutationCodemod

_PENDING_TEST = m.Comparison(
    left=m.Name("request_id"),
    comparisons=[m.ComparisonTarget(
        operator=m.NotEqual(),
        comparator=m.Attribute(value=m.Name("self"), attr=m.Name("pending_request")),
    )],
)


class AnswerIdsOrdered(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("on_answer")))
    @m.leave(_PENDING_TEST)
    def by_order(self, original_node: cst.Comparison, updated_node: cst.Comparison
                 ) -> cst.Comparison:
        self.hit()
        (test,) = updated_node.comparisons
        return updated_node.with_changes(comparisons=[test.with_changes(operator=cst.LessThan())])


MUTANT = Mutant(
    id="M45",
    slug="answer-ids-ordered",
    shape="a subscription matches an answer to its pending request by ordering their ids: "
    "an answer landing in the backoff raises in the subscriber's handler",
    path="subscribe.py",
    site="BoundedSubscription.on_answer",
    target="request_id != self.pending_request",
    kills=("INV7",),
    writes="request_id < self.pending_request",
    removes="request_id != self.pending_request",
    seeds=("answer-in-backoff",),
    drawn_blind="INV7's search draws no subscription and no hold (its seed programs take "
    "them): an answer lands in the backoff only behind a hold of its subscriber that ends "
    "inside it, some 30 s after the subscription starts",
    codemod=AnswerIdsOrdered,
)
