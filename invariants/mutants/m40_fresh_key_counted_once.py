"""M40 fresh-key-counted-once: a key seen for the first time starts its count at one.

Pre-fix shape (a new key's window opened with the message already counted, then counted
again): `start, count, tripped_until = now_ms, 1, -1` in place of `now_ms, 0, -1` in
`StormBreaker.admit`, so a fresh key trips on its threshold-th message in its first window,
one early, while every later window counts right. Obligation (INV6): "fresh keys admitted
up to the threshold".
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import Mutant, MutationCodemod

_FRESH_WINDOW = m.Assign(
    targets=[m.AssignTarget(target=m.Tuple(elements=[
        m.Element(m.Name("start")), m.Element(m.Name("count")), m.Element(m.Name("tripped_until")),
    ]))],
    value=m.Tuple(elements=[m.Element(m.Name("now_ms")), m.Element(m.Integer("0")),
                            m.DoNotCare()]),
)


class FreshKeyCountedOnce(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("admit")))
    @m.leave(_FRESH_WINDOW)
    def counted(self, original_node: cst.Assign, updated_node: cst.Assign) -> cst.Assign:
        self.hit()
        value = updated_node.value
        assert isinstance(value, cst.Tuple)  # guaranteed by the matcher
        start, count, tripped_until = value.elements
        counted = count.with_changes(value=cst.Integer("1"))
        return updated_node.with_changes(value=value.with_changes(
            elements=[start, counted, tripped_until]))


MUTANT = Mutant(
    id="M40",
    slug="fresh-key-counted-once",
    shape="a fresh breaker key starts its count at one: it trips one message early in its "
    "first window",
    path="breaker.py",
    site="StormBreaker.admit",
    target="start, count, tripped_until = now_ms, 0, -1",
    kills=("INV6",),
    writes="start, count, tripped_until = now_ms, 1, -1",
    removes="start, count, tripped_until = now_ms, 0, -1",
    seeds=("storm",),
    codemod=FreshKeyCountedOnce,
)
