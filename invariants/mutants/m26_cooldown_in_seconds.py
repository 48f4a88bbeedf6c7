"""M26 cooldown-in-seconds: a tripped key's 2 s cooldown is read as seconds.

Pre-fix shape (a unit slip): `tripped_until = now_ms + self.cooldown_ms * 1000` in place
of `now_ms + self.cooldown_ms` in `StormBreaker.admit`, so a key that tripped stays
dropped for 2,000 s instead of 2 s: everything its sender posts on it for half an hour is
discarded as a storm. Obligation (INV6): "tripped keys admitted again after the cooldown".
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import Mutant, MutationCodemod

_COOLDOWN_END = m.BinaryOperation(
    left=m.Name("now_ms"),
    operator=m.Add(),
    right=m.Attribute(value=m.Name("self"), attr=m.Name("cooldown_ms")),
)


class CooldownInSeconds(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("admit")))
    @m.leave(_COOLDOWN_END)
    def seconds(
        self, original_node: cst.BinaryOperation, updated_node: cst.BinaryOperation
    ) -> cst.BinaryOperation:
        self.hit()
        return updated_node.with_changes(
            right=cst.parse_expression("self.cooldown_ms * 1000"))


MUTANT = Mutant(
    id="M26",
    slug="cooldown-in-seconds",
    shape="a tripped key stays dropped for 2,000 s, not 2 s",
    path="breaker.py",
    site="StormBreaker.admit",
    target="tripped_until = now_ms + self.cooldown_ms",
    kills=("INV6",),
    writes="tripped_until = now_ms + self.cooldown_ms * 1000",
    removes="",
    seeds=("storm",),
    codemod=CooldownInSeconds,
)
