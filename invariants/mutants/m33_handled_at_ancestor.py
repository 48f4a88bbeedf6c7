"""M33 handled-at-ancestor: a delivery to a missing hub is handed to its nearest live parent.

Pre-fix shape (hierarchical routing that falls back instead of failing):
`hub = mesh.hubs.get(delivery.target) or mesh.hubs.get(mesh.nearest_live_ancestor(...))`
in `MonolithRouteOperation._arrive`, so a post to `h0/gone` is handled at `h0`, which
never was its target, and its sender is never told NotFound. Obligation (INV7):
"deliveries handled where posted".
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import Mutant, MutationCodemod

_TARGET_HUB = m.Call(
    func=m.Attribute(value=m.Attribute(value=m.Name("mesh"), attr=m.Name("hubs")),
                     attr=m.Name("get")),
    args=[m.Arg(value=m.Attribute(value=m.Name("delivery"), attr=m.Name("target")))],
)
_ANCESTOR = "mesh.hubs.get(mesh.nearest_live_ancestor(delivery.target))"


class HandledAtAncestor(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("_arrive")))
    @m.leave(m.Assign(value=_TARGET_HUB))
    def fall_back(self, original_node: cst.Assign, updated_node: cst.Assign) -> cst.Assign:
        self.hit()
        return updated_node.with_changes(value=cst.BooleanOperation(
            left=updated_node.value, operator=cst.Or(), right=cst.parse_expression(_ANCESTOR)))


MUTANT = Mutant(
    id="M33",
    slug="handled-at-ancestor",
    shape="a delivery to a missing hub is handled by its nearest live parent",
    path="routing.py",
    site="MonolithRouteOperation._arrive",
    target="hub = mesh.hubs.get(delivery.target)",
    kills=("INV7",),
    writes="or mesh.hubs.get(mesh.nearest_live_ancestor(delivery.target))",
    removes="",
    seeds=("answer-lands",),
    codemod=HandledAtAncestor,
)
