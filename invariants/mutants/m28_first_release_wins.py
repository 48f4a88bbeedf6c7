"""M28 first-release-wins: a hub's overlapping holds end when the first of them does.

Pre-fix shape (a release timer that does not ask whether a later hold extended the
block): `if not self.blocked:` in place of `if not self.blocked or
self.mesh.scheduler.now < self._blocked_until:` in `Hub._release_if_due`, so the turn
is released at the end of the first hold while a longer one is still in force.
Obligation (INV3): "blocked turns held" (nothing is handled until the latest hold ends).
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import Mutant, MutationCodemod

_NOT_BLOCKED = m.UnaryOperation(
    operator=m.Not(), expression=m.Attribute(value=m.Name("self"), attr=m.Name("blocked"))
)


class FirstReleaseWins(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("_release_if_due")))
    @m.leave(m.If(test=m.BooleanOperation(left=_NOT_BLOCKED, operator=m.Or())))
    def ignore_later_holds(self, original_node: cst.If, updated_node: cst.If) -> cst.If:
        self.hit()
        test = cst.ensure_type(updated_node.test, cst.BooleanOperation)
        return updated_node.with_changes(test=test.left)


MUTANT = Mutant(
    id="M28",
    slug="first-release-wins",
    shape="overlapping holds end when the first one does",
    path="hub.py",
    site="Hub._release_if_due",
    target="if not self.blocked or self.mesh.scheduler.now < self._blocked_until:",
    kills=("INV3",),
    writes="if not self.blocked:",
    removes="self.mesh.scheduler.now < self._blocked_until:",
    seeds=("overlapping-holds",),
    codemod=FirstReleaseWins,
)
