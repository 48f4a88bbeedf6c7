"""M48 window-closes-late: a key's window stays open at its closing millisecond.

Pre-fix shape (an inclusive end, `now - start > window`): `>` in place of `>=` where
`StormBreaker.admit` decides that a key's window has closed, so a post exactly one window
after the key's first is counted in the old window: a key that carried the threshold in
its first window trips on the first post of its second, a legitimate post dropped. Within
the window plus the cooldown, so INV6's bound allows it. Obligation (INV6): "windows opened
by a key's first post", caught by the `window-edges` seed program.
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M48",
    slug="window-closes-late",
    shape="a key's window stays open at its closing millisecond: the first post of its next "
    "window is counted in the full one and trips",
    path="breaker.py",
    site="StormBreaker.admit",
    before="if now_ms - start >= self.window_ms:",
    after="if now_ms - start > self.window_ms:",
    kills=("INV6",),
    seeds=("window-edges",),
)
