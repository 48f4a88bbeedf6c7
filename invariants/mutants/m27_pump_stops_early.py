"""M27 pump-stops-early: a hub's turn re-arms its pump only while two messages wait.

Pre-fix shape (an off-by-one in the action block's loop): `if len(queue) > 1:` in place
of `if queue:` at the end of `Hub._turn`, so the last message of a backlog stays queued
until the next intake wakes the pump, and is never handled when none comes: a delivery
lost without a trace of why. Obligation (INV7): "posted deliveries accounted for".
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import Mutant, MutationCodemod


class PumpStopsEarly(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("_turn")))
    @m.leave(m.If(test=m.Name("queue")))
    def two_or_more(self, original_node: cst.If, updated_node: cst.If) -> cst.If:
        self.hit()
        return updated_node.with_changes(test=cst.parse_expression("len(queue) > 1"))


MUTANT = Mutant(
    id="M27",
    slug="pump-stops-early",
    shape="a hub's pump stops with one message still queued",
    path="hub.py",
    site="Hub._turn",
    target="if queue:",
    kills=("INV7",),
    writes="if len(queue) > 1:",
    removes="if queue:",
    seeds=("backlog",),
    codemod=PumpStopsEarly,
)
