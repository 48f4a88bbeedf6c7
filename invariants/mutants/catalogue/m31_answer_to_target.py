"""M31 answer-to-target: a NACK is addressed back to the hub that failed, not the sender.

Pre-fix shape (the answer built from the wrong end of the envelope):
`Delivery(mesh.new_id("d"), delivery.target, delivery.target, failure, ...)` in
`AnswerLedger.send`, so the DeliveryFailure travels to the target the delivery could not
reach, or that refused it, while the trace still names the sender as its target; the
sender waits for an answer that never comes. Obligation (INV7): "answers landed at their
sender".
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import MutationCodemod, Rewrite

_TO_SENDER = m.Arg(value=m.Attribute(value=m.Name("delivery"), attr=m.Name("sender")),
                   keyword=None)
_NACK = m.Call(func=m.Name("Delivery"))


class AnswerToTarget(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("send")))
    @m.leave(_NACK)
    def to_target(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        args = list(updated_node.args)
        if len(args) < 3 or not m.matches(args[2], _TO_SENDER):
            return updated_node
        self.hit()
        value = cst.Attribute(value=cst.Name("delivery"), attr=cst.Name("target"))
        args[2] = args[2].with_changes(value=value)
        return updated_node.with_changes(args=args)


MUTANT = Rewrite(
    id="M31",
    slug="answer-to-target",
    shape="a NACK goes back to the target that failed, not to the sender",
    path="answers.py",
    site="AnswerLedger.send",
    target='nack = Delivery(mesh.new_id("d"), delivery.target, delivery.sender, failure, ...)',
    kills=("INV7",),
    writes='nack = Delivery(mesh.new_id("d"), delivery.target, delivery.target, failure,',
    removes='nack = Delivery(mesh.new_id("d"), delivery.target, delivery.sender, failure,',
    seeds=("refused-call-answered",),
    codemod=AnswerToTarget,
)
