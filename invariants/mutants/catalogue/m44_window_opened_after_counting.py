"""M44 window-opened-after-counting: a new window loses the message that opens it.

Pre-fix shape (the window moved on after the message was counted, so its count restarts
without it): `start, count = now_ms, -1` in place of `now_ms, 0` where `StormBreaker.admit`
opens a key's next window, so every window after a key's first admits one message past the
threshold and trips one late, while a fresh key's first window counts right. No drop is
early, so every drop rule holds. Obligation (INV6): "storms past the threshold in one
instant stopped", caught by the `storm` seed program's second burst.
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M44",
    slug="window-opened-after-counting",
    shape="a key's next window opens without the message that opens it: every window after "
    "its first admits one past the threshold",
    path="breaker.py",
    site="StormBreaker.admit",
    before="start, count = now_ms, 0",
    after="start, count = now_ms, -1",
    kills=("INV6",),
    seeds=("storm",),
)
