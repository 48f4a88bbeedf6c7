"""M49 late-answer-taken: a subscription takes an answer to any request it ever sent.

Pre-fix shape (the answer matched to its subscription, not to its request): the request-id
test dropped from `BoundedSubscription.on_answer`, so an answer that lands after its
attempt timed out, while the subscription waits out its backoff, is taken: the
subscription reports itself answered by a request it had given up on. Nothing raises and
nothing is sent again. Obligation (INV2): "answers after an attempt timed out not taken",
caught by the `answer-in-backoff` seed program.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import Mutant, MutationCodemod

_GUARD = m.BooleanOperation(
    left=m.Comparison(left=m.Attribute(value=m.Name("self"), attr=m.Name("state"))),
    operator=m.Or(),
    right=m.Comparison(left=m.Name("request_id")),
)


class LateAnswerTaken(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("on_answer")))
    @m.leave(_GUARD)
    def any_request(self, original_node: cst.BooleanOperation,
                    updated_node: cst.BooleanOperation) -> cst.BaseExpression:
        self.hit()
        return updated_node.left


MUTANT = Mutant(
    id="M49",
    slug="late-answer-taken",
    shape="a subscription takes an answer to any request it sent: one landing after its "
    "attempt timed out is taken in the backoff",
    path="subscribe.py",
    site="BoundedSubscription.on_answer",
    target="if self.state is not SubscriptionState.ACTIVE or request_id != self.pending_request:",
    kills=("INV2",),
    writes="if self.state is not SubscriptionState.ACTIVE:",
    removes="if self.state is not SubscriptionState.ACTIVE or request_id != self.pending_request:",
    seeds=("answer-in-backoff",),
    drawn_blind="INV2's search holds only the hubs h0-h2 (`block`), never a subscriber's: "
    "an answer lands after its attempt timed out only behind a hold of its subscriber's "
    "turn longer than the 30 s timeout",
    codemod=LateAnswerTaken,
)
