"""M10 sheds-user-messages: the aggregate watermark sheds whatever arrives past it.

Pre-fix shape (seed 004, Invariant 3): `return depth >= self.watermark` in place of
`return depth >= self.watermark and message_class.sheddable`, so a deep queue sheds the
user-facing and lifecycle messages the watermark exists to keep flowing.
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M10",
    slug="sheds-user-messages",
    shape="past the watermark every class is shed",
    path="breaker.py",
    site="AggregateWatermark.should_shed",
    before="return depth >= self.watermark and message_class.sheddable",
    after="return depth >= self.watermark",
    kills=("INV3",),
    seeds=("flood",),
)
