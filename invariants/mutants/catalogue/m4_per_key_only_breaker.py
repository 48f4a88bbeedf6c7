"""M4 per-key-only breaker: hub intake has no aggregate watermark.

Pre-fix shape (seed 004, Invariant 3): the `if self.watermark.should_shed(...)` block is
gone from `Hub.offer`, so a flood of many distinct keys (none of which trips the per-key
breaker) grows the queue without bound.
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M4",
    slug="per-key-only-breaker",
    shape="no aggregate watermark",
    path="hub.py",
    site="Hub.offer",
    before="if self.watermark.should_shed(message_class, depth):",
    after="",
    kills=("INV3",),
    seeds=("flood",),
)
