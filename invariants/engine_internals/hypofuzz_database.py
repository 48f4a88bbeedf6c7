"""HypoFuzz's database, as the harness reads and writes it: `HypofuzzDatabase` (its
progress reports per test, its worker ids) and `Phase` (what a report or a provider is
doing: generating, replaying, shrinking)."""

from __future__ import annotations

from invariants.engine_internals import HYPOFUZZ_PIN, private_imports

with private_imports("hypofuzz", HYPOFUZZ_PIN):
    from hypofuzz.database import HypofuzzDatabase, Phase

__all__ = ["HypofuzzDatabase", "Phase"]
