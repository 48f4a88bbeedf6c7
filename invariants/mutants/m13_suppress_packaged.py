"""M13 suppress-packaged: the routers' answer guard also suppresses packaged deliveries.

Pre-fix shape (an over-correction of #1485, where packaged heartbeats were answered):
`if not delivery.may_answer() or delivery.packaged:` in `Router.answer_failure`. Routers
only ever see packaged deliveries, so no routing failure is answered at all, not even an
ordinary delivery's.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import Mutant, MutationCodemod

_GUARD = m.UnaryOperation(
    operator=m.Not(),
    expression=m.Call(
        func=m.Attribute(value=m.Name("delivery"), attr=m.Name("may_answer")), args=()
    ),
)


class SuppressPackaged(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("answer_failure")))
    @m.leave(m.If(test=_GUARD))
    def suppress_packaged(self, original_node: cst.If, updated_node: cst.If) -> cst.If:
        self.hit()
        packaged = cst.parse_expression("delivery.packaged")
        test = cst.BooleanOperation(left=updated_node.test, operator=cst.Or(), right=packaged)
        return updated_node.with_changes(test=test)


MUTANT = Mutant(
    id="M13",
    slug="suppress-packaged",
    shape="router guards suppress every packaged delivery",
    path="routing.py",
    site="Router.answer_failure",
    target="if not delivery.may_answer():",
    kills=("INV7",),
    writes="if not delivery.may_answer() or delivery.packaged:",
    removes="if not delivery.may_answer():",
    seeds=("departed-owner",),
    codemod=SuppressPackaged,
)
