"""Search power: how soon the state machines' drawn rules alone find each mutant.

    python benchmarks/search_power.py [--seeds N] [--max-examples N] [--only M33,M41]

For each negative control of the mutant registry (a mutant and an invariant it must break),
the invariant's search runs with its seed scenarios left out, so only the drawn rules
explore (`run_invariant(..., seed_scenarios=False)`), seeded by the run's number (no
database, no shrinking), at most `--max-examples` examples; reported per control: in how
many of the `--seeds` runs it was found and the median examples to it. A mutant whose
record says the drawn rules cannot reach it (`drawn_blind`) is listed with its reason.

Search power is a property of the search over many seeds, not of one seed: that is why it
is measured here and not pinned in a test (the kill matrix proves each kill, once).
A script, not a test: the figures depend on Hypothesis' version and the machine's load.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence

from seeded_runs import found_in  # the sibling script: seeded searches

from invariants.checks import CHECK_IDS
from invariants.mutants.build import build_mutant
from invariants.mutants.registry import MUTANTS


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--max-examples", type=int, default=100)
    parser.add_argument("--only", default="", help="comma-separated mutant ids")
    args = parser.parse_args(argv)
    only = {m for m in args.only.split(",") if m}
    print(f"{args.seeds} seeds, at most {args.max_examples} examples, drawn rules alone")
    for mutant in MUTANTS:
        if only and mutant.id not in only:
            continue
        for check in (c for c in mutant.kills if c in CHECK_IDS):
            if mutant.drawn_blind:
                print(f"  {mutant.id} {check}: drawn-blind ({mutant.drawn_blind})")
                continue
            factory = build_mutant(mutant).factory
            started = time.perf_counter()
            found = [n for seed in range(args.seeds)
                     if (n := found_in(check, factory, seed, args.max_examples,
                                       seed_scenarios=False)) is not None]
            median = f"{statistics.median(found):g}" if found else "-"
            print(f"  {mutant.id} {check}: found in {len(found)} of {args.seeds}, median "
                  f"{median} examples  [{time.perf_counter() - started:.0f} s]", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
