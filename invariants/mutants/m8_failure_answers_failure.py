"""M8 failure-answers-failure: `report_failure` answers whatever it is handed.

Pre-fix shape (the DeliveryFailure/ShutdownRequest ping-pong): the `if not
delivery.may_answer(): ... return` gate is gone from `report_failure` (the reporting
tail), so a DeliveryFailure that cannot be delivered is answered by another one.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import Mutant, MutationCodemod

_GATE = m.If(
    test=m.UnaryOperation(
        operator=m.Not(),
        expression=m.Call(
            func=m.Attribute(value=m.Name("delivery"), attr=m.Name("may_answer")), args=()
        ),
    )
)


class FailureAnswersFailure(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("report_failure")))
    @m.leave(_GATE)
    def drop_gate(self, original_node: cst.If, updated_node: cst.If) -> cst.RemovalSentinel:
        self.hit()
        return cst.RemoveFromParent()


MUTANT = Mutant(
    id="M8",
    slug="failure-answers-failure",
    shape="report_failure answers a DeliveryFailure",
    path="hub.py",
    site="report_failure",
    target="if not delivery.may_answer(): ... return",
    kills=("MESH001", "INV1"),
    writes="",
    removes="if not delivery.may_answer():",
    seeds=("failure-ping-pong",),
    codemod=FailureAnswersFailure,
)
