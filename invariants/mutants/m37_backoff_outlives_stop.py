"""M37 backoff-outlives-stop: the stop ends only a subscription with a request in flight.

Pre-fix shape (the stop reads "open" as "waiting for an answer"): `if self.state is not
SubscriptionState.ACTIVE or self.pending_request is None: return` in
`BoundedSubscription.terminate`, so a subscription waiting out a resubscribe backoff when
the silo stops (its latest attempt failed, no request pending) is skipped by the stop: its
retry timer fires after the stop completed and it resubscribes on a stopped silo, spending
its retries on refused dispatches. Obligation (INV2): "subscriptions in backoff ended with
the silo".
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import Mutant, MutationCodemod

_NOT_ACTIVE = m.Comparison(
    left=m.Attribute(value=m.Name("self"), attr=m.Name("state")),
    comparisons=[m.ComparisonTarget(operator=m.IsNot())],
)


class BackoffOutlivesStop(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("terminate")))
    @m.leave(m.If(test=_NOT_ACTIVE))
    def skip_backoff(self, original_node: cst.If, updated_node: cst.If) -> cst.If:
        self.hit()
        return updated_node.with_changes(test=cst.BooleanOperation(
            left=updated_node.test, operator=cst.Or(),
            right=cst.parse_expression("self.pending_request is None")))


MUTANT = Mutant(
    id="M37",
    slug="backoff-outlives-stop",
    shape="a subscription waiting out its backoff survives the stop and resubscribes",
    path="subscribe.py",
    site="BoundedSubscription.terminate",
    target="if self.state is not SubscriptionState.ACTIVE:",
    kills=("INV2",),
    writes="or self.pending_request is None",
    removes="",
    seeds=("stop-in-backoff",),
    codemod=BackoffOutlivesStop,
)
