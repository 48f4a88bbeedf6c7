"""M25 breaker-window-never-slides: a key's breaker window never moves on.

Pre-fix shape (a tumbling window that never tumbles): the statement
`if now_ms - start >= self.window_ms: start, count = now_ms, 0` removed from
`StormBreaker.admit`, so a key counts every message since it was first seen (or since it
last tripped): one that sent 1,001 messages a minute ago trips on its 1,000th today,
though no window ever held more than the threshold. Obligation (INV6): "keys counted
afresh in a new window".
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M25",
    slug="breaker-window-never-slides",
    shape="a key's breaker window never moves on: every message since it was first seen counts",
    path="breaker.py",
    site="StormBreaker.admit",
    before="if now_ms - start >= self.window_ms:",
    after="",
    kills=("INV6",),
    seeds=("storm",),
)
