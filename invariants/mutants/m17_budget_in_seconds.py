"""M17 budget-in-seconds: the stop hold's budget is read as seconds, so it lasts 30 ms.

Pre-fix shape (a unit slip): `self.mesh.scheduler.after(self.budget_ms // 1000, ...)` in
place of `after(self.budget_ms, ...)` in `RoutingQuiescenceParticipant.hold_until_drained`,
so a graceful stop is released "budget" long before the 30 s with accepted legs still in
flight. Obligation (INV5): "graceful stops held with legs in flight" (held until every leg
landed or the 30 s budget expired).
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import Mutant, MutationCodemod

_BUDGET_TIMER = m.Call(
    func=m.Attribute(attr=m.Name("after")),
    args=[
        m.Arg(value=m.Attribute(value=m.Name("self"), attr=m.Name("budget_ms"))),
        m.Arg(value=m.Attribute(attr=m.Name("_budget_spent"))),
    ],
)


class BudgetInSeconds(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("hold_until_drained")))
    @m.leave(_BUDGET_TIMER)
    def seconds(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        self.hit()
        first, *rest = updated_node.args
        budget = first.with_changes(value=cst.parse_expression("self.budget_ms // 1000"))
        return updated_node.with_changes(args=[budget, *rest])


MUTANT = Mutant(
    id="M17",
    slug="budget-in-seconds",
    shape="the stop hold's budget expires after 30 ms, legs still in flight",
    path="quiescence.py",
    site="RoutingQuiescenceParticipant.hold_until_drained",
    target="self.mesh.scheduler.after(self.budget_ms, self._budget_spent)",
    kills=("INV5",),
    writes="self.mesh.scheduler.after(self.budget_ms // 1000, self._budget_spent)",
    removes="self.mesh.scheduler.after(self.budget_ms, self._budget_spent)",
    seeds=("stop-with-legs", "stop-budget-expiry"),
    codemod=BudgetInSeconds,
)
