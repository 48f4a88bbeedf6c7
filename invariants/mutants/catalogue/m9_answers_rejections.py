"""M9 answers-rejections: the identity guard answers the post it rejected.

Pre-fix shape (seed 004, Invariant 1): the `delivery.identity is None` branch of
`Hub.offer` hands the rejected post to the reporting tail,
`report_failure(self.mesh, address, delivery, ErrorType.REJECTED)`, before it returns, so a
rejection becomes failure traffic instead of ending where it was logged.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import MutationCodemod, Rewrite

# The identity guard as the reference writes it: log the rejection, return (two statements;
# a third means the answer is already there, so a second application finds nothing).
_IDENTITY_GUARD = m.If(
    test=m.BooleanOperation(
        left=m.Comparison(left=m.Attribute(value=m.Name("delivery"), attr=m.Name("identity")))
    ),
    body=m.IndentedBlock(body=[m.DoNotCare(), m.SimpleStatementLine(body=[m.Return()])]),
)
_ANSWER = "report_failure(self.mesh, address, delivery, ErrorType.REJECTED)"


class AnswersRejections(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("offer")))
    @m.leave(_IDENTITY_GUARD)
    def answer_rejection(self, original_node: cst.If, updated_node: cst.If) -> cst.If:
        self.hit()
        body = updated_node.body
        assert isinstance(body, cst.IndentedBlock)  # guaranteed by the matcher
        logged, returned = body.body
        answer = cst.SimpleStatementLine(body=[cst.Expr(cst.parse_expression(_ANSWER))])
        return updated_node.with_changes(body=body.with_changes(body=[logged, answer, returned]))


MUTANT = Rewrite(
    id="M9",
    slug="answers-rejections",
    shape="the identity guard answers the post it rejected",
    path="hub.py",
    site="Hub.offer",
    target="if delivery.identity is None and ...: (log, return)",
    kills=("INV1",),
    writes="report_failure(self.mesh, address, delivery, ErrorType.REJECTED)",
    removes="",
    seeds=("rejection",),
    codemod=AnswersRejections,
)
