"""Measure the mutation score of the whole reference mesh and print it with its survivors.

    python benchmarks/mutation_score.py [--jobs K] [--sample N --seed S] [--json FILE]
                                        [--compare | --unguided]

Every Cosmic Ray mutant of the bundled reference mesh (less the documented exclusions) runs
through the scan and the invariants in the `ci` profile, as `prove --mutate` does, with no
cache, so each figure is a cold run. Prints the score, the totals, mutants per minute, the
time per phase and the survivors grouped by file and function. By default each mutant is
judged by the checks whose runs reach its statement (coverage-guided, as `prove --mutate`
does); `--unguided` judges every mutant by every check; `--compare` runs the same mutants
both ways, unguided first, and prints both times side by side and every mutant whose
verdict (status, or the check credited with the kill) differs. A script, not a test: the
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
from invariants.mutants.score.run import Options, ScoreRun, run_score
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
    how = parser.add_mutually_exclusive_group()
    how.add_argument("--unguided", action="store_true", help="judge by every check")
    how.add_argument("--compare", action="store_true", help="unguided and guided, both")
    args = parser.parse_args(argv)

    def score(guided: bool) -> ScoreRun:
        return run_score(
            reference_target(reference_scan_config()), load(args.triage),
            Options(sample=args.sample, seed=args.seed, jobs=args.jobs, timeout=args.timeout,
                    guided=guided),
            progress=lambda line: print(line, file=sys.stderr, flush=True),
        )

    if args.compare:
        return compare(score(False), score(True))
    scored = score(not args.unguided)
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


def _verdicts(run: ScoreRun) -> dict[str, tuple[str, str, str]]:
    return {r.mutant.id: (r.verdict.status, r.verdict.check, r.verdict.phase)
            for r in run.results if r.verdict is not None}


def compare(unguided: ScoreRun, guided: ScoreRun) -> int:
    """Both runs' times and scores side by side, then every verdict that differs."""
    for name, run in (("unguided", unguided), ("guided", guided)):
        data = report.to_json(run)
        print(f"{name:9} {data['total']} mutants: {run.seconds:7.1f} s wall "
              f"{run.cpu_seconds:7.1f} s CPU, score {data['score']}, killed {data['killed']}, "
              f"survived {len(data['survived']) + len(data['blind'])} "
              f"(no check reaches {data['unreached']}), timeouts {len(data['timeouts'])}")
    print(f"ratio guided/unguided: wall {guided.seconds / unguided.seconds:.2f}x, "
          f"CPU {guided.cpu_seconds / unguided.cpu_seconds:.2f}x")
    before, after = _verdicts(unguided), _verdicts(guided)
    status = [m for m in before if before[m][0] != after.get(m, ("-",))[0]]
    credit = [m for m in before if m not in status and before[m] != after.get(m)]
    print(f"verdicts: {len(before)} compared, {len(status)} with another status, "
          f"{len(credit)} killed by another check (the search order is measured anew)")
    for mutant in status + credit:
        print(f"  {mutant}: unguided {before[mutant]}, guided {after.get(mutant)}")
    return 1 if status else 0


if __name__ == "__main__":
    raise SystemExit(main())
