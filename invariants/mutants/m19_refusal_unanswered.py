"""M19 refusal-unanswered: a dispatch refused during the stop is dropped without an answer.

Pre-fix shape (the stop's refusal written as a plain drop): the
`if not mesh.silo.stopped: self.answer_failure(delivery, ErrorType.SHUTTING_DOWN, ...)`
statement is gone from `Router.dispatch`, so an ordinary post the router refuses once the
stop has begun is logged DISPATCH_REFUSED and never answered ShuttingDown; its sender
waits for an answer that never comes. Obligation (INV7): "ordinary failed deliveries
answered once".
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import Mutant, MutationCodemod

_ANSWER_REFUSAL = m.If(
    test=m.UnaryOperation(
        operator=m.Not(),
        expression=m.Attribute(
            value=m.Attribute(value=m.Name("mesh"), attr=m.Name("silo")),
            attr=m.Name("stopped"),
        ),
    )
)


class RefusalUnanswered(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("dispatch")))
    @m.leave(_ANSWER_REFUSAL)
    def drop_answer(
        self, original_node: cst.If, updated_node: cst.If
    ) -> cst.RemovalSentinel:
        self.hit()
        return cst.RemoveFromParent()


MUTANT = Mutant(
    id="M19",
    slug="refusal-unanswered",
    shape="a dispatch refused during the stop is never answered",
    path="routing.py",
    site="Router.dispatch",
    target="if not mesh.silo.stopped: self.answer_failure(...)",
    kills=("INV7",),
    writes="",
    removes="if not mesh.silo.stopped:",
    seeds=("answer-once",),
    codemod=RefusalUnanswered,
)
