"""M44 window-opened-after-counting: a new window loses the message that opens it.

Pre-fix shape (the window moved on after the message was counted, so its count restarts
without it): `start, count = now_ms, -1` in place of `now_ms, 0` where `StormBreaker.admit`
opens a key's next window, so every window after a key's first admits one message past the
threshold and trips one late, while a fresh key's first window counts right. No drop is
early, so every drop rule holds. Obligation (INV6): "storms past the threshold in one
instant stopped", caught by the `storm` seed program's second burst.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import Mutant, MutationCodemod

_NEXT_WINDOW = m.Assign(
    targets=[m.AssignTarget(target=m.Tuple(elements=[
        m.Element(m.Name("start")), m.Element(m.Name("count")),
    ]))],
    value=m.Tuple(elements=[m.Element(m.Name("now_ms")), m.Element(m.Integer("0"))]),
)


class WindowOpenedAfterCounting(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("admit")))
    @m.leave(_NEXT_WINDOW)
    def lose_the_opener(self, original_node: cst.Assign, updated_node: cst.Assign
                        ) -> cst.Assign:
        self.hit()
        value = updated_node.value
        assert isinstance(value, cst.Tuple)  # guaranteed by the matcher
        start, count = value.elements
        lost = count.with_changes(value=cst.UnaryOperation(cst.Minus(), cst.Integer("1")))
        return updated_node.with_changes(value=value.with_changes(elements=[start, lost]))


MUTANT = Mutant(
    id="M44",
    slug="window-opened-after-counting",
    shape="a key's next window opens without the message that opens it: every window after "
    "its first admits one past the threshold",
    path="breaker.py",
    site="StormBreaker.admit",
    target="start, count = now_ms, 0",
    kills=("INV6",),
    writes="start, count = now_ms, -1",
    removes="start, count = now_ms, 0",
    seeds=("storm",),
    codemod=WindowOpenedAfterCounting,
)
