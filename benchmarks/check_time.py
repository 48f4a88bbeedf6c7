"""Time `python -m harness check` on a mesh: the current tree against a baseline.

    python benchmarks/check_time.py [--baseline REV] [--repeat N] [--current-only]
                                    [--jobs K] [--json FILE] [--mesh DIR]

Both sides are measured in one run. The current side is `python -m harness check` at this
repository's root (PYTHONPATH the root), or in its folder `--mesh DIR` (an example
repository, `examples/aiomesh-repo`: check then judges that repository's own mesh, as its
[tool.harness] says); the baseline side is the same command in a
temporary `git worktree add --detach` of REV (PYTHONPATH that worktree), removed afterwards,
also on an error or an interrupt. The runs are interleaved, current then baseline,
`--repeat` times (default 3), so a change in the machine's load hits both sides alike. Each
run is measured as wall time (`time.perf_counter` around the subprocess) and as the CPU
time of the child and whatever it waited for (`resource.getrusage(RUSAGE_CHILDREN)`, user
plus system, before and after). Printed per side: minimum and median of both, the exit
code of every run and the number of kill-matrix mutants the run reported ("N of M mutants
killed ...": M); then the ratio current/baseline of the medians and of the minima, the load
average before and after, and whether the current side's median wall time meets the goal
"check on the reference mesh <= 10 s on this machine" (information only: nothing here fails
on a time). `--current-only` measures the current side alone; the current side always runs
as `check --jobs K`, K from `--jobs` (default 1; the command's own default, one worker per
core, is `--jobs 0`), the baseline as it is (older trees lack the option): in one process
before 83ac3d3, with one worker per core from it on, so compare a later baseline with
`--jobs 0`; `--json FILE` also writes every run and summary as JSON.

The default baseline, b497462 ("CI: lint-imports beside ruff and mypy"), is the parent of
345cf36, the first commit of the verdict-evidence work (harness facts, per-obligation
evidence counts, "not exercised"; merged in 3f251ad). That branch grew from b497462, so the
baseline is the tree that work started from: it runs the kill matrix of that time (M1-M8;
mutants M9-M21 came later, in other branches), which is why the mutant counts are printed
beside the times. Any revision `git rev-parse` understands can be given instead, e.g.
3f251ad^1 for the main line just before the merge.

Exit status: 0 when every current run exited with check's pass code (0: everything passed;
harness/jobs/check/command.py), 1 when one did not or a run could not be started, 2 on a
usage error or a baseline that cannot be checked out. The baseline's exit codes are
recorded, never judged: an older tree may report differently. A script, not a test: the
figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_BASELINE = "b497462"
GOAL_SECONDS = 10.0
PASS_CODE = 0  # `check`: 0 all passed, 1 a check failed, 2 usage or configuration error
COMMAND = ("-m", "harness", "check")
CURRENT, BASELINE = "current", "baseline"
# The kill matrix's line in check's text report, at every revision since `check` exists:
# "3. Kill matrix: PASS (21 of 21 mutants killed by every check that must kill them)".
_MUTANTS = re.compile(r"Kill matrix: \w+ \((\d+) of (\d+) mutants killed")


@dataclass(frozen=True)
class Run:
    """One `check` run of one side."""

    side: str
    wall_seconds: float
    cpu_seconds: float
    exit_code: int
    mutants: int | None  # kill-matrix mutants the report names; None: no kill-matrix line


@dataclass(frozen=True)
class Summary:
    """One side's runs, reduced."""

    side: str
    revision: str
    runs: int
    wall_min: float
    wall_median: float
    cpu_min: float
    cpu_median: float
    exit_codes: tuple[int, ...]
    mutants: tuple[int | None, ...]


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--baseline", metavar="REV", default=DEFAULT_BASELINE,
                        help=f"the git revision to compare with (default {DEFAULT_BASELINE}, "
                        "the tree the verdict-evidence work started from)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per side (default 3)")
    parser.add_argument("--current-only", action="store_true",
                        help="measure the current tree alone")
    parser.add_argument("--jobs", type=int, default=1, metavar="K",
                        help="the current side's check --jobs (default 1; 0: one per core)")
    parser.add_argument("--json", type=Path, default=None, metavar="FILE",
                        help="also write every run and the summaries as JSON")
    parser.add_argument("--mesh", default=".", metavar="DIR",
                        help="the folder, relative to each side's tree, to run check in "
                        "(default: the root, where check judges the reference mesh; "
                        "examples/aiomesh-repo: that repository's own [tool.harness])")
    args = parser.parse_args(argv)
    if Path(args.mesh).is_absolute() or ".." in Path(args.mesh).parts:
        parser.error("--mesh must be a folder inside the tree, relative to its root")
    if args.repeat < 1:
        parser.error("--repeat must be >= 1")
    if args.jobs < 0:
        parser.error("--jobs must be >= 0")
    return args


def mutants_run(report: str) -> int | None:
    """The number of kill-matrix mutants a text report of `check` names, if it names any."""
    match = _MUTANTS.search(report)
    return int(match.group(2)) if match else None


def ratio(current: float, baseline: float) -> float | None:
    """current / baseline, or None where the baseline is zero."""
    return current / baseline if baseline > 0 else None


def summarize(side: str, revision: str, runs: Sequence[Run]) -> Summary:
    walls = [run.wall_seconds for run in runs]
    cpus = [run.cpu_seconds for run in runs]
    return Summary(
        side=side, revision=revision, runs=len(runs),
        wall_min=min(walls), wall_median=statistics.median(walls),
        cpu_min=min(cpus), cpu_median=statistics.median(cpus),
        exit_codes=tuple(run.exit_code for run in runs),
        mutants=tuple(run.mutants for run in runs),
    )


def _mutant_text(mutants: Sequence[int | None]) -> str:
    known = sorted({m for m in mutants if m is not None})
    if not known:
        return "not reported"
    text = "/".join(str(m) for m in known)
    return text + (" (some runs reported none)" if None in mutants else "")


def _ratio_text(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def render(summaries: Sequence[Summary], load_before: Sequence[float],
           load_after: Sequence[float], goal: float = GOAL_SECONDS,
           mesh: str = ".") -> str:
    """The text report: one row per side, the ratios, the load and the goal."""
    lines = [
        f"{'side':9} {'revision':12} {'runs':>4} {'wall min':>9} {'wall med':>9} "
        f"{'CPU min':>9} {'CPU med':>9}  exit codes  mutants",
    ]
    for s in summaries:
        lines.append(
            f"{s.side:9} {s.revision[:12]:12} {s.runs:4d} {s.wall_min:8.1f}s "
            f"{s.wall_median:8.1f}s {s.cpu_min:8.1f}s {s.cpu_median:8.1f}s  "
            f"{','.join(str(c) for c in s.exit_codes):10}  {_mutant_text(s.mutants)}"
        )
    by_side = {s.side: s for s in summaries}
    current, baseline = by_side.get(CURRENT), by_side.get(BASELINE)
    if current is not None and baseline is not None:
        lines.append(
            "ratio current/baseline: wall "
            f"{_ratio_text(ratio(current.wall_median, baseline.wall_median))} median, "
            f"{_ratio_text(ratio(current.wall_min, baseline.wall_min))} min; CPU "
            f"{_ratio_text(ratio(current.cpu_median, baseline.cpu_median))} median, "
            f"{_ratio_text(ratio(current.cpu_min, baseline.cpu_min))} min"
        )
    lines.append("load average (1, 5, 15 min): before "
                 + ", ".join(f"{x:.2f}" for x in load_before) + "; after "
                 + ", ".join(f"{x:.2f}" for x in load_after)
                 + f"; {os.cpu_count() or '?'} CPUs")
    if current is not None:
        met = "met" if current.wall_median <= goal else "NOT met"
        judged = "the reference mesh" if mesh == "." else mesh
        lines.append(f"goal: check on {judged} <= {goal:g} s on this machine: {met} "
                     f"(current median wall {current.wall_median:.1f} s; information only)")
    return "\n".join(lines) + "\n"


def to_json(summaries: Sequence[Summary], runs: Sequence[Run], load_before: Sequence[float],
            load_after: Sequence[float], goal: float = GOAL_SECONDS) -> dict[str, Any]:
    by_side = {s.side: s for s in summaries}
    current, baseline = by_side.get(CURRENT), by_side.get(BASELINE)
    data: dict[str, Any] = {
        "command": "python " + " ".join(COMMAND),
        "summaries": [asdict(s) for s in summaries],
        "runs": [asdict(r) for r in runs],
        "load_before": list(load_before),
        "load_after": list(load_after),
        "cpus": os.cpu_count(),
        "goal_seconds": goal,
        "goal_met": None if current is None else current.wall_median <= goal,
        "ratio": None,
    }
    if current is not None and baseline is not None:
        data["ratio"] = {
            "wall_median": ratio(current.wall_median, baseline.wall_median),
            "wall_min": ratio(current.wall_min, baseline.wall_min),
            "cpu_median": ratio(current.cpu_median, baseline.cpu_median),
            "cpu_min": ratio(current.cpu_min, baseline.cpu_min),
        }
    return data


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(side: str, root: Path, options: Sequence[str] = (),
            mesh: str = ".") -> tuple[Run, str]:
    """One `python -m harness check [options]` in `root`'s folder `mesh`, importing the
    harness from `root` only."""
    env = dict(os.environ, PYTHONPATH=str(root))
    env.pop("PYTEST_ADDOPTS", None)
    cpu_before = _children_cpu()
    started = time.perf_counter()
    result = subprocess.run([sys.executable, *COMMAND, *options], cwd=root / mesh, env=env,
                            capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    cpu = _children_cpu() - cpu_before
    return Run(side, wall, cpu, result.returncode, mutants_run(result.stdout)), result.stderr


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


@contextlib.contextmanager
def worktree(revision: str) -> Iterator[Path]:
    """A detached worktree of `revision`, removed on the way out whatever happened."""
    scratch = Path(tempfile.mkdtemp(prefix="check-time-"))
    path = scratch / "baseline"
    try:
        _git("worktree", "add", "--detach", str(path), revision)
        yield path
    finally:
        with contextlib.suppress(subprocess.CalledProcessError):
            _git("worktree", "remove", "--force", str(path))
        shutil.rmtree(scratch, ignore_errors=True)
        with contextlib.suppress(subprocess.CalledProcessError):
            _git("worktree", "prune")


def _progress(index: int, repeat: int, run: Run) -> None:
    print(f"{run.side} {index}/{repeat}: {run.wall_seconds:.1f} s wall, "
          f"{run.cpu_seconds:.1f} s CPU, exit {run.exit_code}, "
          f"mutants {run.mutants if run.mutants is not None else '-'}",
          file=sys.stderr, flush=True)


def run_sides(repeat: int, baseline_root: Path | None, jobs: int = 1,
              mesh: str = ".") -> list[Run]:
    """Every run, interleaved: current, baseline, current, baseline, ..."""
    sides = [(CURRENT, ROOT)] + ([] if baseline_root is None else [(BASELINE, baseline_root)])
    runs: list[Run] = []
    for index in range(1, repeat + 1):
        for side, root in sides:
            options = ("--jobs", str(jobs)) if side == CURRENT else ()  # its default is per core
            if not (root / mesh).is_dir():
                raise OSError(f"{side}: no folder {mesh} in {root}")
            run, stderr = measure(side, root, options, mesh)
            _progress(index, repeat, run)
            if side == CURRENT and run.exit_code != PASS_CODE:
                tail = "\n".join(stderr.splitlines()[-20:])
                print(f"{side}: check exited {run.exit_code}:\n{tail}", file=sys.stderr)
            runs.append(run)
    return runs


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    current_rev = _git("rev-parse", "HEAD")
    if _git("status", "--porcelain", "--untracked-files=no"):
        current_rev += "+dirty"
    load_before = os.getloadavg()
    try:
        if args.current_only:
            runs = run_sides(args.repeat, None, args.jobs, args.mesh)
            baseline_rev = ""
        else:
            try:
                baseline_rev = _git("rev-parse", "--verify", f"{args.baseline}^{{commit}}")
            except subprocess.CalledProcessError:
                print(f"check_time: unknown revision {args.baseline!r}", file=sys.stderr)
                return 2
            try:
                with worktree(baseline_rev) as baseline_root:
                    runs = run_sides(args.repeat, baseline_root, args.jobs, args.mesh)
            except subprocess.CalledProcessError as exc:
                print(f"check_time: {' '.join(exc.cmd)} failed: {exc.stderr}", file=sys.stderr)
                return 2
    except OSError as exc:
        print(f"check_time: could not run check: {exc}", file=sys.stderr)
        return 1
    load_after = os.getloadavg()
    summaries = [summarize(CURRENT, current_rev, [r for r in runs if r.side == CURRENT])]
    if not args.current_only:
        summaries.append(summarize(BASELINE, baseline_rev,
                                   [r for r in runs if r.side == BASELINE]))
    sys.stdout.write(render(summaries, load_before, load_after, mesh=args.mesh))
    if args.json is not None:
        data = to_json(summaries, runs, load_before, load_after)
        args.json.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    failed = any(r.side == CURRENT and r.exit_code != PASS_CODE for r in runs)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
