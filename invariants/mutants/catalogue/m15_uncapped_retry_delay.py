"""M15 uncapped-retry-delay: the delivery retry delay keeps doubling past 3 s.

Pre-fix shape (the cap forgotten): `return RETRY_BASE_DELAY_MS * (1 << retry)` in place of
`return min(RETRY_BASE_DELAY_MS * (1 << retry), RETRY_MAX_DELAY_MS)` in `retry_delay_ms`,
so the fifth retry waits 4 s and the sixth 8 s. Obligation: "retry delays timed" (each
retry comes min(250*2^n, 3000) ms after the failure it answers).
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M15",
    slug="uncapped-retry-delay",
    shape="retry delays double without the 3 s cap",
    path="constants.py",
    site="retry_delay_ms",
    before="return min(RETRY_BASE_DELAY_MS * (1 << retry), RETRY_MAX_DELAY_MS)",
    after="return RETRY_BASE_DELAY_MS * (1 << retry)",
    kills=("INV4",),
    seeds=("rejection-retry",),
)
