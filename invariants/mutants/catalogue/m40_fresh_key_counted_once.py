"""M40 fresh-key-counted-once: a key seen for the first time starts its count at one.

Pre-fix shape (a new key's window opened with the message already counted, then counted
again): `start, count, tripped_until = now_ms, 1, -1` in place of `now_ms, 0, -1` in
`StormBreaker.admit`, so a fresh key trips on its threshold-th message in its first window,
one early, while every later window counts right. Obligation (INV6): "fresh keys admitted
up to the threshold".
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M40",
    slug="fresh-key-counted-once",
    shape="a fresh breaker key starts its count at one: it trips one message early in its "
    "first window",
    path="breaker.py",
    site="StormBreaker.admit",
    before="start, count, tripped_until = now_ms, 0, -1",
    after="start, count, tripped_until = now_ms, 1, -1",
    kills=("INV6",),
    seeds=("storm",),
)
