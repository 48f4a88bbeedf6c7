"""M48 window-closes-late: a key's window stays open at its closing millisecond.

Pre-fix shape (an inclusive end, `now - start > window`): `>` in place of `>=` where
`StormBreaker.admit` decides that a key's window has closed, so a post exactly one window
after the key's first is counted in the old window: a key that carried the threshold in
its first window trips on the first post of its second, a legitimate post dropped. Within
the window plus the cooldown, so INV6's bound allows it. Obligation (INV6): "windows opened
by a key's first post", caught by the `window-edges` seed program.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import Mutant, MutationCodemod, swap_operator

_WINDOW_CLOSED = m.Comparison(
    left=m.BinaryOperation(left=m.Name("now_ms"), operator=m.Subtract(), right=m.Name("start")),
    comparisons=[m.ComparisonTarget(operator=m.GreaterThanEqual(),
                                    comparator=m.Attribute(attr=m.Name("window_ms")))],
)


class WindowClosesLate(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("admit")))
    @m.leave(_WINDOW_CLOSED)
    def inclusive_end(self, original_node: cst.Comparison, updated_node: cst.Comparison
                      ) -> cst.Comparison:
        self.hit()
        (target,) = updated_node.comparisons
        operator = target.operator
        assert isinstance(operator, cst.GreaterThanEqual)  # guaranteed by the matcher
        late = swap_operator(operator, cst.GreaterThan)
        return updated_node.with_changes(comparisons=[target.with_changes(operator=late)])


MUTANT = Mutant(
    id="M48",
    slug="window-closes-late",
    shape="a key's window stays open at its closing millisecond: the first post of its next "
    "window is counted in the full one and trips",
    path="breaker.py",
    site="StormBreaker.admit",
    target="if now_ms - start >= self.window_ms:",
    kills=("INV6",),
    writes="if now_ms - start > self.window_ms:",
    removes="if now_ms - start >= self.window_ms:",
    seeds=("window-edges",),
    codemod=WindowClosesLate,
)
