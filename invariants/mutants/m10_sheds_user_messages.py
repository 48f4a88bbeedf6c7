"""M10 sheds-user-messages: the aggregate watermark sheds whatever arrives past it.

Pre-fix shape (seed 004, Invariant 3): `return depth >= self.watermark` in place of
`return depth >= self.watermark and message_class.sheddable`, so a deep queue sheds the
user-facing and lifecycle messages the watermark exists to keep flowing.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import Mutant, MutationCodemod

_CLASS_AWARE = m.Return(
    value=m.BooleanOperation(
        operator=m.And(),
        right=m.Attribute(value=m.Name("message_class"), attr=m.Name("sheddable")),
    )
)


class ShedsUserMessages(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("should_shed")))
    @m.leave(_CLASS_AWARE)
    def ignore_class(self, original_node: cst.Return, updated_node: cst.Return) -> cst.Return:
        self.hit()
        value = updated_node.value
        assert isinstance(value, cst.BooleanOperation)  # guaranteed by the matcher
        return updated_node.with_changes(value=value.left)


MUTANT = Mutant(
    id="M10",
    slug="sheds-user-messages",
    shape="past the watermark every class is shed",
    path="breaker.py",
    site="AggregateWatermark.should_shed",
    target="return depth >= self.watermark and message_class.sheddable",
    kills=("INV3",),
    writes="return depth >= self.watermark",
    removes="and message_class.sheddable",
    seeds=("flood",),
    codemod=ShedsUserMessages,
)
