"""False alarms: a correct mesh's invariants, searched over seeds, should never fail.

    python benchmarks/clean_meshes.py --repo examples/relaycore-repo [--seeds N]
        [--max-examples N] [--invariants INV1,INV4] [--json FILE]

`check --profile ci` judges a mesh by one derandomized search per invariant; a mesh that
passes it may still fail another user's run, whose seed differs. Here each invariant the
repository's adapter (its `[tool.harness] adapter`, with its `[tool.harness.params]`) is
searched `--seeds` times, seeded by the seed's number (Hypothesis' global seed; no
database, no shrinking), each at most `--max-examples`; each failing seed is listed, and
the first one's first line: on a correct mesh each is a false alarm, or a bug of the mesh
itself (the repository's README says which of its own it knows). `--max-examples` is the
seeded search's, not `ci`'s budget: an obligation a run leaves unexercised fails it too.
The runs judge every other checker as bystanders, as `check` does, but the figure is the
invariant's own verdict.

A script, not a test: the figures depend on Hypothesis' version and the machine's load.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from seeded_runs import factory_named, repo_settings, seeded_run  # the sibling script

from invariants.adapter import AdapterFactory
from invariants.checks import CHECKS, CheckParams


@dataclass
class Row:
    invariant: str
    seeds: int = 0
    failed: list[int] = field(default_factory=list)  # the seeds whose run failed
    first: str = ""  # the first failing seed's first line
    not_applicable: bool = False


def measure(factory: AdapterFactory, params: CheckParams, invariants: Sequence[str],
            seeds: int, max_examples: int) -> list[Row]:
    """Each invariant searched over `seeds` on meshes from `factory`."""
    rows = []
    for invariant in invariants:
        row = Row(invariant)
        for seed in range(seeds):
            outcome = seeded_run(invariant, factory, seed, max_examples, params=params)
            if outcome.verdict == "not applicable":
                row.not_applicable = True
                break
            row.seeds += 1
            if outcome.verdict != "pass":
                row.failed.append(seed)
                if not row.first:
                    lines = (outcome.failure_text or outcome.verdict).splitlines()
                    row.first = next((line for line in lines
                                      if line.startswith(f"{invariant}:")), lines[0])
        print(f"  {invariant}: {_verdict(row)}", flush=True)
        rows.append(row)
    return rows


def _verdict(row: Row) -> str:
    if row.not_applicable:
        return "not applicable"
    if not row.failed:
        return f"0 of {row.seeds} seeds failed"
    return (f"{len(row.failed)} of {row.seeds} seeds failed (seeds "
            f"{', '.join(map(str, row.failed))}) — {row.first[:160]}")


def table(repo: Path, rows: Sequence[Row]) -> str:
    lines = [f"{repo.name}: false alarms over seeds", "| invariant | verdict |", "|---|---|"]
    lines += [f"| {row.invariant} | {_verdict(row)} |" for row in rows]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--max-examples", type=int, default=100)
    parser.add_argument("--invariants", default=",".join(sorted(CHECKS)),
                        help="comma-separated invariants (default: all)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    invariants = [i for i in args.invariants.split(",") if i]
    unknown = [i for i in invariants if i not in CHECKS]
    if unknown:
        parser.error(f"--invariants: unknown {', '.join(unknown)} (known: {', '.join(CHECKS)})")
    repo = args.repo.resolve()
    sys.path.insert(0, str(repo / "src"))
    settings = repo_settings(repo)
    rows = measure(factory_named(settings.adapters[0]), settings.params, invariants,
                   args.seeds, args.max_examples)
    print(table(repo, rows))
    if args.json is not None:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=2), encoding="utf-8")
    return 0 if all(not row.failed for row in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
