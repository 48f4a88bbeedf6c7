"""The `-k` expression that selects mutant M3's prove item alone."""

from __future__ import annotations

from invariants.mutants.registry import MUTANTS

# -k matches by substring: "M3" alone would select M30, M31, ... too.
ONLY_M3 = " and ".join(["prove and M3", *(f"not {m.id}" for m in MUTANTS
                                          if m.id.startswith("M3") and m.id != "M3")])
