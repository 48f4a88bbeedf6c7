"""Measure the mutation score of the whole reference mesh and print it with its survivors.

    python benchmarks/mutation_score.py [--jobs K] [--sample N --seed S] [--json FILE]

Every Cosmic Ray mutant of the bundled reference mesh (less the documented exclusions) runs
through the scan and the invariants in the `ci` profile, as `prove --mutate` does, with no
cache, so each figure is a cold run. Prints the score, the totals, mutants per minute, the
time per phase and the survivors grouped by file and function. A script, not a test: the
figures depend on the machine and its load (docs/mutation-score.md records them).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from invariants.mutants.matrix import reference_scan_config
from invariants.mutants.score import report
from invariants.mutants.score.run import Options, run_score
from invariants.mutants.score.target import reference_target
from invariants.mutants.score.triage import FILENAME, load


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--sample", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--triage", type=Path, default=Path(__file__).parents[1] / FILENAME)
    parser.add_argument("--json", type=Path, default=None, help="also write the JSON report")
    args = parser.parse_args(argv)
    scored = run_score(
        reference_target(reference_scan_config()), load(args.triage),
        Options(sample=args.sample, seed=args.seed, jobs=args.jobs, timeout=args.timeout),
        progress=lambda line: print(line, file=sys.stderr, flush=True),
    )
    data = report.to_json(scored)
    if args.json is not None:
        args.json.write_text(json.dumps(data, indent=2), encoding="utf-8")
    seconds: dict[str, float] = {}
    for result in scored.results:
        if result.verdict is not None:
            status = result.verdict.status
            seconds[status] = seconds.get(status, 0.0) + result.verdict.seconds
    cpu_rate = data["total"] / (data["cpu_seconds"] / 60) if data["cpu_seconds"] else 0.0
    print(f"jobs {args.jobs}, {data['total']} mutants in {data['seconds']:.0f} s wall "
          f"({data['cpu_seconds']:.0f} s CPU): {data['mutants_per_minute']} mutants/min, "
          f"{cpu_rate:.1f} per CPU-minute")
    print("worker seconds by outcome: "
          + ", ".join(f"{k} {v:.0f}" for k, v in sorted(seconds.items())))
    print(report.to_text(scored), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
