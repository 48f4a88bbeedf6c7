"""M24 flat-subscribe-backoff: every resubscribe waits the first backoff, never doubled.

Pre-fix shape (a backoff that forgets to grow): `delay = self.first_delay_ms` in place of
`delay = self.first_delay_ms * (1 << self.attempt)` in
`BoundedSubscription._retry_or_terminate`, so retries come 250 ms after each failure
instead of 250, 500, 1000, 2000 and 4000 ms: a subscription to a missing target still
terminates after N+1 attempts, within its bound, it only hammers the target faster.
Obligation (INV2): "resubscribe delays timed".
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import Mutant, MutationCodemod

_FIRST_DELAY = m.Attribute(value=m.Name("self"), attr=m.Name("first_delay_ms"))
_DOUBLING = m.BinaryOperation(
    left=_FIRST_DELAY,
    operator=m.Multiply(),
    right=m.BinaryOperation(
        left=m.Integer("1"),
        operator=m.LeftShift(),
        right=m.Attribute(value=m.Name("self"), attr=m.Name("attempt")),
    ),
)


class FlatSubscribeBackoff(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("_retry_or_terminate")))
    @m.leave(_DOUBLING)
    def flat(
        self, original_node: cst.BinaryOperation, updated_node: cst.BinaryOperation
    ) -> cst.BaseExpression:
        self.hit()
        return updated_node.left


MUTANT = Mutant(
    id="M24",
    slug="flat-subscribe-backoff",
    shape="every resubscribe waits the first backoff, not 250 ms doubling",
    path="subscribe.py",
    site="BoundedSubscription._retry_or_terminate",
    target="delay = self.first_delay_ms * (1 << self.attempt)",
    kills=("INV2",),
    writes="delay = self.first_delay_ms",
    removes="delay = self.first_delay_ms * (1 << self.attempt)",
    seeds=("missing-target",),
    codemod=FlatSubscribeBackoff,
)
