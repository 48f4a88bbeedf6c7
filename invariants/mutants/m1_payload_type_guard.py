"""M1 payload-type-guard: the router's failure guard tests the payload's type.

Pre-fix shape (#1485): `if isinstance(delivery.message, DeliveryFailure):` in place of
`if not delivery.may_answer():`. Routers only ever see packaged deliveries, whose payload
is RawJson, so the type test never matches and heartbeats and failures are answered.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m
from libcst.codemod.visitors import AddImportsVisitor

from invariants.mutants.base import Mutant, MutationCodemod

_GUARD = m.UnaryOperation(
    operator=m.Not(),
    expression=m.Call(
        func=m.Attribute(value=m.Name("delivery"), attr=m.Name("may_answer")), args=()
    ),
)


class PayloadTypeGuard(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("answer_failure")))
    @m.leave(m.If(test=_GUARD))
    def read_payload_type(self, original_node: cst.If, updated_node: cst.If) -> cst.If:
        self.hit()
        AddImportsVisitor.add_needed_import(
            self.context, "reference_impl.messages", "DeliveryFailure"
        )
        test = cst.parse_expression("isinstance(delivery.message, DeliveryFailure)")
        return updated_node.with_changes(test=test)


MUTANT = Mutant(
    id="M1",
    slug="payload-type-guard",
    shape="router guards test the payload type instead of may_answer()",
    path="routing.py",
    site="Router.answer_failure",
    target="if not delivery.may_answer():",
    kills=("MESH001", "MESH002", "INV7"),
    writes="if isinstance(delivery.message, DeliveryFailure):",
    removes="if not delivery.may_answer():",
    seeds=("answer-once", "departed-owner"),
    codemod=PayloadTypeGuard,
)
