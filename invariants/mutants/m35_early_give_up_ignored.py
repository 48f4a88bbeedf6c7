"""M35 early-give-up-ignored: a give-up that comes before Active does not reach it.

Pre-fix shape: the host's give-up (a non-graceful stop asked for while a graceful one runs)
only cancels a hold already running; `Silo.stop` no longer marks the stop non-graceful, so
a give-up that comes before the stop reaches Active (the host's shutdown timeout expired
first, or in the stop's own instant) is forgotten, and Active then holds for the legs in
flight all the same. The negative control of INV5's "stops given up before Active not
held".
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import Mutant, MutationCodemod

_MARK_NON_GRACEFUL = m.SimpleStatementLine(body=[m.Assign(
    targets=[m.AssignTarget(target=m.Attribute(value=m.Name("self"), attr=m.Name("graceful")))],
    value=m.Name("False"),
)])


class EarlyGiveUpIgnored(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("stop")))
    @m.call_if_inside(m.If(test=m.UnaryOperation(operator=m.Not(),
                                                 expression=m.Name("graceful"))))
    @m.leave(_MARK_NON_GRACEFUL)
    def forget(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.RemovalSentinel:
        self.hit()
        return cst.RemoveFromParent()


MUTANT = Mutant(
    id="M35",
    slug="early-give-up-ignored",
    shape="a give-up before Active is forgotten: Active still holds",
    path="lifecycle.py",
    site="Silo.stop",
    target="if not graceful: self.graceful = False",
    kills=("INV5",),
    writes="",
    removes="self.graceful = False",
    seeds=("stop-given-up-at-once",),
    codemod=EarlyGiveUpIgnored,
)
