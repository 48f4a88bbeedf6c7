"""M4 per-key-only breaker: hub intake has no aggregate watermark.

Pre-fix shape (seed 004, Invariant 3): the `if self.watermark.should_shed(...)` block is
gone from `Hub.offer`, so a flood of many distinct keys (none of which trips the per-key
breaker) grows the queue without bound.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import Mutant, MutationCodemod

_SHED_CHECK = m.If(
    test=m.Call(
        func=m.Attribute(
            value=m.Attribute(value=m.Name("self"), attr=m.Name("watermark")),
            attr=m.Name("should_shed"),
        )
    )
)


class PerKeyOnlyBreaker(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("offer")))
    @m.leave(_SHED_CHECK)
    def drop_watermark(
        self, original_node: cst.If, updated_node: cst.If
    ) -> cst.RemovalSentinel:
        self.hit()
        return cst.RemoveFromParent()


MUTANT = Mutant(
    id="M4",
    slug="per-key-only-breaker",
    shape="no aggregate watermark",
    path="hub.py",
    site="Hub.offer",
    target="if self.watermark.should_shed(...):",
    kills=("INV3",),
    writes="",
    removes="if self.watermark.should_shed(",
    seeds=("flood",),
    codemod=PerKeyOnlyBreaker,
)
