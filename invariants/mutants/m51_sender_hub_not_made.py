"""M51 sender-hub-not-made: a post does not make its sender's hub.

Pre-fix shape (the sender taken for an address that already exists): `sender in
mesh.hubs` in place of `sender not in mesh.hubs` where `ReferenceAdapter.post` makes a
poster's own hub on first use, so a sender the harness never made has no hub: the answer
to its post is emitted and dropped where it should land, and no event says so.
Obligation (INV7): "answers landed at their sender" (its sender is live once it posted),
caught by the `departed-owner` seed program.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import Mutant, MutationCodemod, swap_operator

_NEW_SENDER = m.Comparison(
    left=m.Name("sender"),
    comparisons=[m.ComparisonTarget(operator=m.NotIn(),
                                    comparator=m.Attribute(attr=m.Name("hubs")))],
)


class SenderHubNotMade(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("post")))
    @m.leave(_NEW_SENDER)
    def existing_only(self, original_node: cst.Comparison, updated_node: cst.Comparison
                      ) -> cst.Comparison:
        self.hit()
        (test,) = updated_node.comparisons
        operator = test.operator
        assert isinstance(operator, cst.NotIn)  # guaranteed by the matcher
        within = swap_operator(operator, cst.In)
        return updated_node.with_changes(comparisons=[test.with_changes(operator=within)])


MUTANT = Mutant(
    id="M51",
    slug="sender-hub-not-made",
    shape="a post does not make its sender's hub: the answer to a sender the harness never "
    "made is dropped where it should land",
    path="adapter.py",
    site="ReferenceAdapter.post",
    target="if sender not in mesh.hubs:",
    kills=("INV7",),
    writes="if sender in mesh.hubs:",
    removes="if sender not in mesh.hubs:",
    seeds=("departed-owner",),
    codemod=SenderHubNotMade,
)
