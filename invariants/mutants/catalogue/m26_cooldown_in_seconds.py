"""M26 cooldown-in-seconds: a tripped key's 2 s cooldown is read as seconds.

Pre-fix shape (a unit slip): `tripped_until = now_ms + self.cooldown_ms * 1000` in place
of `now_ms + self.cooldown_ms` in `StormBreaker.admit`, so a key that tripped stays
dropped for 2,000 s instead of 2 s: everything its sender posts on it for half an hour is
discarded as a storm. Obligation (INV6): "tripped keys admitted again after the cooldown".
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M26",
    slug="cooldown-in-seconds",
    shape="a tripped key stays dropped for 2,000 s, not 2 s",
    path="breaker.py",
    site="StormBreaker.admit",
    before="tripped_until = now_ms + self.cooldown_ms",
    after="tripped_until = now_ms + self.cooldown_ms * 1000",
    kills=("INV6",),
    seeds=("storm",),
)
