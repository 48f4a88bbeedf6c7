"""M25 breaker-window-never-slides: a key's breaker window never moves on.

Pre-fix shape (a tumbling window that never tumbles): the statement
`if now_ms - start >= self.window_ms: start, count = now_ms, 0` removed from
`StormBreaker.admit`, so a key counts every message since it was first seen (or since it
last tripped): one that sent 1,001 messages a minute ago trips on its 1,000th today,
though no window ever held more than the threshold. Obligation (INV6): "keys counted
afresh in a new window".
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import Mutant, MutationCodemod

_TUMBLE = m.If(
    test=m.Comparison(
        left=m.BinaryOperation(left=m.Name("now_ms"), operator=m.Subtract(),
                               right=m.Name("start")),
        comparisons=[m.ComparisonTarget(
            operator=m.GreaterThanEqual(),
            comparator=m.Attribute(value=m.Name("self"), attr=m.Name("window_ms")),
        )],
    ),
)


class BreakerWindowNeverSlides(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("admit")))
    @m.leave(_TUMBLE)
    def never(
        self, original_node: cst.If, updated_node: cst.If
    ) -> cst.RemovalSentinel:
        self.hit()
        return cst.RemoveFromParent()


MUTANT = Mutant(
    id="M25",
    slug="breaker-window-never-slides",
    shape="a key's breaker window never moves on: every message since it was first seen counts",
    path="breaker.py",
    site="StormBreaker.admit",
    target="if now_ms - start >= self.window_ms: start, count = now_ms, 0",
    kills=("INV6",),
    writes="",
    removes="if now_ms - start >= self.window_ms:",
    seeds=("storm",),
    codemod=BreakerWindowNeverSlides,
)
