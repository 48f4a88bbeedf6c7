"""M52 pump-takes-newest: a hub's pump takes the newest queued message first.

Pre-fix shape (a stack where a queue was meant): `queue.pop()` in place of
`queue.popleft()` in `Hub._turn`, so a sender's direct posts to one hub, queued in the
order posted, are handled newest first: everything still runs and is answered, only out
of order. Obligation (INV7): "posts handled in their sender's order", caught by the
`backlog` seed program.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import Mutant, MutationCodemod


class PumpTakesNewest(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("_turn")))
    @m.leave(m.Call(func=m.Attribute(value=m.Name("queue"), attr=m.Name("popleft"))))
    def newest_first(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        self.hit()
        func = updated_node.func
        assert isinstance(func, cst.Attribute)  # guaranteed by the matcher
        return updated_node.with_changes(func=func.with_changes(attr=cst.Name("pop")))


MUTANT = Mutant(
    id="M52",
    slug="pump-takes-newest",
    shape="a hub's pump takes the newest queued message first: one sender's direct posts "
    "are handled out of the order posted",
    path="hub.py",
    site="Hub._turn",
    target="delivery = queue.popleft()",
    kills=("INV7",),
    writes="delivery = queue.pop()",
    removes="delivery = queue.popleft()",
    seeds=("backlog",),
    codemod=PumpTakesNewest,
)
