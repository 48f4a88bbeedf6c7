"""Time the kill matrix, `python -m harness prove`, with one job against K jobs, side by side.

    python benchmarks/prove_speed.py [--mutants M1 M3 M9] [--full] [--jobs 2] [--repeat 1]
                                     [--parallel-only] [--compare-every-cell] [--profile ci]
                                     [--json FILE]

Both sides run in one invocation of this script, interleaved (`--jobs 1`, then `--jobs K`,
`--repeat` times), so a change in the machine's load hits both alike. A side is
`python -m harness prove --format json --jobs N` on the chosen mutants (default M1, M3
and M9, each against every check, the reference too) or, with `--full`, the full matrix
(every mutant). Each run is measured as wall time (`time.perf_counter` around the
subprocess) and as the CPU time of the child and its workers
(`resource.getrusage(RUSAGE_CHILDREN)`, user plus system, before and after). Printed per
side: minimum and median of both and every exit code; then the ratios K jobs / 1 job of the
medians, the load average before and after, and whether every run gave the same matrix
(the JSON without the per-cell seconds). `--parallel-only` runs the `--jobs K` side alone
(half the cost, no ratios), for a figure of K workers by itself (benchmarks/speed_report.py).
`--compare-every-cell` adds a third side, `--jobs K --every-cell` (the matrix unguided by
coverage: every cell runs), and its ratio to the guided `--jobs K`; the matrices compared
then leave out which cells were `unreached`, so "same matrix" says the guided verdicts,
examples and steps are the full matrix's.
Information only: nothing here fails on a time.

Exit status: 0 when every run exited 0 and every matrix is the same, 1 otherwise, 2 on a
usage error. A script, not a test: the figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_MUTANTS = ("M1", "M3", "M9")


@dataclass(frozen=True)
class Run:
    """One `prove` run of one side."""

    jobs: int
    every_cell: bool
    wall_seconds: float
    cpu_seconds: float
    exit_code: int
    matrix: str  # the JSON matrix without seconds, canonical; "" when there was none


@dataclass(frozen=True)
class Summary:
    jobs: int
    every_cell: bool
    runs: int
    wall_min: float
    wall_median: float
    cpu_min: float
    cpu_median: float
    exit_codes: tuple[int, ...]

    @property
    def label(self) -> str:
        return f"jobs {self.jobs}" + (" --every-cell" if self.every_cell else "")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--mutants", nargs="+", metavar="ID", default=list(DEFAULT_MUTANTS),
                        help=f"the mutants of the subset (default {' '.join(DEFAULT_MUTANTS)})")
    parser.add_argument("--full", action="store_true",
                        help="the full matrix: every mutant against every check")
    parser.add_argument("--jobs", type=int, default=2, metavar="K",
                        help="the parallel side's --jobs (default 2)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per side (default 1)")
    parser.add_argument("--parallel-only", action="store_true",
                        help="only the --jobs K side: no 1-job side, no ratios")
    parser.add_argument("--compare-every-cell", action="store_true",
                        help="also run --jobs K --every-cell (unguided) and compare")
    parser.add_argument("--profile", default="ci", help="Hypothesis profile (default ci)")
    parser.add_argument("--json", type=Path, default=None, metavar="FILE",
                        help="also write every run and the summaries as JSON")
    args = parser.parse_args(argv)
    if args.repeat < 1 or args.jobs < 2:
        parser.error("--repeat must be >= 1 and --jobs >= 2")
    return args


def command(args: argparse.Namespace, jobs: int, every_cell: bool = False) -> list[str]:
    selection = [] if args.full else [part for m in args.mutants for part in ("--mutant", m)]
    return [sys.executable, "-m", "harness", "prove", "--format", "json", "--profile",
            args.profile, "--jobs", str(jobs), *selection,
            *(["--every-cell"] if every_cell else [])]


def canonical(stdout: str) -> str:
    """The matrix as `prove --format json` prints it, without the per-cell seconds and
    which cells coverage guidance left unrun."""
    try:
        data: dict[str, Any] = json.loads(stdout)
    except json.JSONDecodeError:
        return ""
    for cells in data.get("mutants", {}).values():
        for cell in cells.values():
            cell.pop("seconds", None)
            cell.pop("unreached", None)
    return json.dumps(data, sort_keys=True)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(args: argparse.Namespace, jobs: int, every_cell: bool = False) -> Run:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")])))
    cpu, started = _children_cpu(), time.perf_counter()
    done = subprocess.run(command(args, jobs, every_cell), cwd=ROOT, env=env,
                          capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    return Run(jobs, every_cell, wall, _children_cpu() - cpu, done.returncode,
               canonical(done.stdout))


def summarize(jobs: int, runs: Sequence[Run], every_cell: bool = False) -> Summary:
    walls = [r.wall_seconds for r in runs]
    cpus = [r.cpu_seconds for r in runs]
    return Summary(jobs, every_cell, len(runs), min(walls), statistics.median(walls),
                   min(cpus), statistics.median(cpus), tuple(r.exit_code for r in runs))


def _ratio(side: Summary, to: Summary) -> str:
    wall = side.wall_median / to.wall_median if to.wall_median else float("nan")
    cpu = side.cpu_median / to.cpu_median if to.cpu_median else float("nan")
    return f"{side.label} / {to.label} (medians): wall {wall:.2f}, cpu {cpu:.2f}"


def report(serial: Summary | None, parallel: Summary, same: bool,
           load: tuple[str, str], unguided: Summary | None = None) -> str:
    """The table; without a 1-job side (`--parallel-only`), no ratios."""
    lines = [f"{'side':<19}{'runs':>5}{'wall min':>10}{'wall med':>10}{'cpu min':>10}"
             f"{'cpu med':>10}  exit codes"]
    for side in (s for s in (serial, parallel, unguided) if s is not None):
        lines.append(f"{side.label:<19}{side.runs:>5}{side.wall_min:>9.1f}s"
                     f"{side.wall_median:>9.1f}s{side.cpu_min:>9.1f}s{side.cpu_median:>9.1f}s"
                     f"  {' '.join(map(str, side.exit_codes))}")
    if serial is not None:
        lines.append(_ratio(parallel, serial))
    if unguided is not None:
        lines.append(_ratio(parallel, unguided))
    lines.append(f"load average before: {load[0]}; after: {load[1]}")
    lines.append(f"same matrix in every run: {'yes' if same else 'NO'}")
    return "\n".join(lines)


def _load_average() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    scope = "the full matrix" if args.full else f"mutants {' '.join(args.mutants)}"
    sides = [(args.jobs, False)] if args.parallel_only else [(1, False), (args.jobs, False)]
    sides += [(args.jobs, True)] if args.compare_every_cell else []
    print(f"prove on {scope}, profile {args.profile}: "
          + " against ".join(f"--jobs {jobs}" + (" --every-cell" if every else "")
                             for jobs, every in sides)
          + f", {args.repeat} run(s) each, interleaved", flush=True)
    before = _load_average()
    runs: list[Run] = []
    for _ in range(args.repeat):
        for jobs, every in sides:
            runs.append(measure(args, jobs, every))
            print(f"  {summarize(jobs, runs[-1:], every).label}: "
                  f"{runs[-1].wall_seconds:.1f} s wall, {runs[-1].cpu_seconds:.1f} s cpu, "
                  f"exit {runs[-1].exit_code}", flush=True)

    def side(jobs: int, every: bool) -> Summary | None:
        chosen = [r for r in runs if (r.jobs, r.every_cell) == (jobs, every)]
        return summarize(jobs, chosen, every) if chosen else None

    parallel = side(args.jobs, False)
    assert parallel is not None
    same = len({r.matrix for r in runs}) == 1 and bool(runs[0].matrix)
    print(report(side(1, False), parallel, same, (before, _load_average()),
                 side(args.jobs, True)))
    if args.json is not None:
        args.json.write_text(json.dumps({
            "runs": [{k: v for k, v in asdict(r).items() if k != "matrix"} for r in runs],
            "summaries": [asdict(s) for s in (side(1, False), parallel, side(args.jobs, True))
                          if s is not None],
            "same_matrix": same,
        }, indent=2) + "\n", encoding="utf-8")
    return 0 if same and all(r.exit_code == 0 for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
