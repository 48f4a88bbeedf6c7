"""M6 no-stop-hold: the Active-stage stop participant returns at once.

Pre-fix shape (#2638): `on_active_stop` calls `done()` instead of
`self.hold_until_drained(done)`, so grains deactivate with route legs still in flight.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import Mutant, MutationCodemod

_HOLD = m.Call(
    func=m.Attribute(value=m.Name("self"), attr=m.Name("hold_until_drained")),
    args=[m.Arg(value=m.Name("done"))],
)


class NoStopHold(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("on_active_stop")))
    @m.leave(_HOLD)
    def return_at_once(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        self.hit()
        return cst.Call(func=cst.Name("done"))


MUTANT = Mutant(
    id="M6",
    slug="no-stop-hold",
    shape="the Active participant returns at once",
    path="quiescence.py",
    site="RoutingQuiescenceParticipant.on_active_stop",
    target="self.hold_until_drained(done)",
    kills=("INV5",),
    writes="done()",
    removes="self.hold_until_drained(done)",
    seeds=("stop-with-legs",),
    codemod=NoStopHold,
)
