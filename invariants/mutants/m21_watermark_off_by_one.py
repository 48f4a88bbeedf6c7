"""M21 watermark-off-by-one: a sheddable message is still admitted at the watermark.

Pre-fix shape (an off-by-one in the shed test): `return depth > self.watermark and
message_class.sheddable` in place of `depth >= self.watermark ...` in
`AggregateWatermark.should_shed`, so a queue of sheddable traffic grows one past its
watermark before anything is shed. Obligation (INV3): "sheddable messages shed past the
watermark" (never admitted to a queue at or above it).
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import Mutant, MutationCodemod

_AT_OR_ABOVE = m.Comparison(
    left=m.Name("depth"),
    comparisons=[m.ComparisonTarget(
        operator=m.GreaterThanEqual(),
        comparator=m.Attribute(value=m.Name("self"), attr=m.Name("watermark")),
    )],
)


class WatermarkOffByOne(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("should_shed")))
    @m.leave(_AT_OR_ABOVE)
    def above_only(
        self, original_node: cst.Comparison, updated_node: cst.Comparison
    ) -> cst.Comparison:
        self.hit()
        (target,) = updated_node.comparisons
        return updated_node.with_changes(
            comparisons=[target.with_changes(operator=cst.GreaterThan())]
        )


MUTANT = Mutant(
    id="M21",
    slug="watermark-off-by-one",
    shape="sheddable traffic is shed only above the watermark, not at it",
    path="breaker.py",
    site="AggregateWatermark.should_shed",
    target="return depth >= self.watermark and message_class.sheddable",
    kills=("INV3",),
    writes="return depth > self.watermark and",
    removes="return depth >= self.watermark and",
    seeds=("flood",),
    codemod=WatermarkOffByOne,
)
