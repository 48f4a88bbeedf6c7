"""M35 early-give-up-ignored: a give-up that comes before Active does not reach it.

Pre-fix shape: the host's give-up (a non-graceful stop asked for while a graceful one runs)
only cancels a hold already running; `Silo.stop` no longer marks the stop non-graceful, so
a give-up that comes before the stop reaches Active (the host's shutdown timeout expired
first, or in the stop's own instant) is forgotten, and Active then holds for the legs in
flight all the same. The negative control of INV5's "stops given up before Active not
held".
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M35",
    slug="early-give-up-ignored",
    shape="a give-up before Active is forgotten: Active still holds",
    path="lifecycle.py",
    site="Silo.stop",
    before="self.graceful = False",
    after="",
    kills=("INV5",),
    seeds=("stop-given-up-at-once",),
)
