"""M7 detached-nack: the NACK runs outside the routing pool and its handle is discarded.

Pre-fix shape (#2638): `handle = self.mesh.pool.subscribe(nack)` becomes the bare
statement `nack.subscribe(self.mesh.scheduler)`: the NACK is neither counted by the gauge
nor drained, so a stop can complete while it is still on its way.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import MutationCodemod, Rewrite

_POOL_SUBSCRIBE = m.Call(
    func=m.Attribute(
        value=m.Attribute(value=m.DoNotCare(), attr=m.Name("pool")), attr=m.Name("subscribe")
    ),
    args=[m.Arg(value=m.Name())],
)
_KEPT_HANDLE = m.SimpleStatementLine(
    body=[m.Assign(targets=[m.AssignTarget(target=m.Name("handle"))], value=_POOL_SUBSCRIBE)]
)
_RETURN_HANDLE = m.Return(value=m.Name("handle"))


class DetachedNack(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("send_nack")))
    @m.leave(_KEPT_HANDLE)
    def detach(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine:
        self.hit()
        assign = updated_node.body[0]
        assert isinstance(assign, cst.Assign) and isinstance(assign.value, cst.Call)
        operation = assign.value.args[0].value
        bare = cst.Call(
            func=cst.Attribute(value=operation, attr=cst.Name("subscribe")),
            args=[cst.Arg(cst.parse_expression("self.mesh.scheduler"))],
        )
        return updated_node.with_changes(body=[cst.Expr(bare)])

    @m.call_if_inside(m.FunctionDef(name=m.Name("send_nack")))
    @m.leave(_RETURN_HANDLE)
    def forget_handle(self, original_node: cst.Return, updated_node: cst.Return) -> cst.Return:
        self.hit()
        return updated_node.with_changes(value=cst.Name("None"))


MUTANT = Rewrite(
    id="M7",
    slug="detached-nack",
    shape="the NACK subscription is discarded, outside the leg",
    path="answers.py",
    site="AnswerLedger.send_nack",
    target="handle = self.mesh.pool.subscribe(nack) ... return handle",
    kills=("MESH004", "INV5"),
    writes="nack.subscribe(self.mesh.scheduler)",
    removes="handle = self.mesh.pool.subscribe(nack)",
    seeds=("stop-with-legs",),
    codemod=DetachedNack,
    expected_hits=2,
)
