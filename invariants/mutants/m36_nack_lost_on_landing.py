"""M36 nack-lost-on-landing: a NACK's leg ends without delivering its answer.

Pre-fix shape (seed 001, tier 2: a leg past its subscribe "completes silently — no NACK"):
`NackOperation._land` ends the leg without offering the DeliveryFailure at its sender's hub
(nor reporting it where the sender has gone), so the gauge falls and a graceful stop's hold
is released as if the answer had landed. The negative control of INV5's "NACK legs ended
during the hold landed".
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import Mutant, MutationCodemod

_DELIVER = m.If(
    test=m.Comparison(left=m.Name("hub")),
    body=m.IndentedBlock(body=[m.SimpleStatementLine(body=[m.Expr(m.Call(
        func=m.Attribute(value=m.Name("hub"), attr=m.Name("offer")),
        args=[m.Arg(value=m.Name("nack"))],
    ))])]),
)


class NackLostOnLanding(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("_land")))
    @m.leave(_DELIVER)
    def lose(self, original_node: cst.If, updated_node: cst.If) -> cst.RemovalSentinel:
        self.hit()
        return cst.RemoveFromParent()


MUTANT = Mutant(
    id="M36",
    slug="nack-lost-on-landing",
    shape="a NACK's leg ends without delivering its answer",
    path="answers.py",
    site="NackOperation._land",
    target="if hub is not None: hub.offer(nack) else: report_failure(...)",
    kills=("INV5",),
    writes="",
    removes="hub.offer(nack)",
    seeds=("stop-nack-in-flight",),
    codemod=NackLostOnLanding,
)
