"""M12 holds-non-graceful: the Active-stage participant holds every stop.

Pre-fix shape (the first cut of the #2638 hold): `on_active_stop` has no `if not
self.silo.graceful: done(); return` branch, so a non-graceful stop (the host's token
already cancelled) still waits for the routing gauge to drain.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import Mutant, MutationCodemod

_NON_GRACEFUL = m.If(
    test=m.UnaryOperation(
        operator=m.Not(),
        expression=m.Attribute(
            value=m.Attribute(value=m.Name("self"), attr=m.Name("silo")),
            attr=m.Name("graceful"),
        ),
    )
)


class HoldsNonGraceful(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("on_active_stop")))
    @m.leave(_NON_GRACEFUL)
    def always_hold(self, original_node: cst.If, updated_node: cst.If) -> cst.RemovalSentinel:
        self.hit()
        return cst.RemoveFromParent()


MUTANT = Mutant(
    id="M12",
    slug="holds-non-graceful",
    shape="a non-graceful stop still holds at Active",
    path="quiescence.py",
    site="RoutingQuiescenceParticipant.on_active_stop",
    target="if not self.silo.graceful: done(); return",
    kills=("INV5",),
    writes="",
    removes="if not self.silo.graceful:",
    seeds=("stop-non-graceful",),
    codemod=HoldsNonGraceful,
)
