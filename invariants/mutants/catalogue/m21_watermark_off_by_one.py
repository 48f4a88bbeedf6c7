"""M21 watermark-off-by-one: a sheddable message is still admitted at the watermark.

Pre-fix shape (an off-by-one in the shed test): `return depth > self.watermark and
message_class.sheddable` in place of `depth >= self.watermark ...` in
`AggregateWatermark.should_shed`, so a queue of sheddable traffic grows one past its
watermark before anything is shed. Obligation (INV3): "sheddable messages shed past the
watermark" (never admitted to a queue at or above it).
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M21",
    slug="watermark-off-by-one",
    shape="sheddable traffic is shed only above the watermark, not at it",
    path="breaker.py",
    site="AggregateWatermark.should_shed",
    before="depth >= self.watermark",
    after="depth > self.watermark",
    kills=("INV3",),
    seeds=("flood",),
)
