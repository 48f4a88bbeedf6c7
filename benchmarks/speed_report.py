"""Report the project's five speed figures side by side, each against its goal, in one run.

    python benchmarks/speed_report.py [--skip NAME ...] [--quick]
                                      [--baseline REV | --mutations-against FILE]
                                      [--json FILE]

Each figure is measured by the benchmark script that owns it, run as a subprocess (this
interpreter, the repository root as working directory and PYTHONPATH), whose JSON output
(`--json`, into a temporary directory) is read back; each script's own output is printed
as it runs, so nothing is hidden. The figures, in the order they run, and their goals:

1. check: `check_time.py --current-only --jobs 0`, `python -m harness check` on the
   reference mesh, median wall seconds (goal <= 10 s on the idle machine).
2. prove: `prove_speed.py --full --jobs 2 --parallel-only`, the full kill matrix with two
   workers, wall and CPU seconds (goal <= 180 s wall on 2 cores).
3. mutate: `mutation_score.py --jobs 2`, every mutant of the reference mesh, wall and CPU
   seconds, score, killed and survived (goal <= 600 s wall). With `--baseline REV` the same
   script also runs in a temporary `git worktree add --detach REV` (PYTHONPATH that tree;
   removed afterwards, also on an error or an interrupt: check_time.py's helper), and
   every mutant both runs judged with another status or another killing check is listed.
   A baseline whose script has no `--json` is said so and left out.
   `--mutations-against FILE` compares the verdicts with an earlier run's instead
   (`mutation_score.py --json FILE`), at no extra cost.
4. fuzz: `fuzz_sessions.py --startup N`, a fuzzing session's start-up per worker: the sum
   of the median worker phases (fork, worker collection, worker database, first example;
   each the slowest worker's), beside the whole start-up until the box's clock started
   (goal <= 2 s per worker).
5. scan: `scan_speed.py`, a cold scan against bare `libcst.parse_module` on the large
   (standard library) and the small (140 files) corpus (goal <= 1.0x on both).

Then one table: figure, measured values, goal, met or not, and the load average before and
after. `--quick` runs small sizes as a smoke run (check once, prove on prove_speed.py's
default mutants, a mutation sample of 6, one fuzz start-up, 20 files per scan corpus); the
prove and mutate goals are for the full runs and are not judged then. `--skip` leaves
figures out.

Exit status: 0 whatever the figures (information only), 1 when a script exited non-zero
or wrote no JSON (each named), 2 on a usage error. A script, not a test: the figures depend
on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import check_time  # the sibling script: its worktree helper, git and child-CPU clock

ROOT = Path(__file__).resolve().parents[1]
FIGURES = ("check", "prove", "mutate", "fuzz", "scan")
SCRIPTS = {"check": "check_time.py", "prove": "prove_speed.py", "mutate": "mutation_score.py",
           "fuzz": "fuzz_sessions.py", "scan": "scan_speed.py"}
PROVE_GOAL = 180.0  # seconds wall, the full kill matrix with 2 workers
MUTATE_GOAL = 600.0  # seconds wall, every mutant with 2 jobs
WORKER_STARTUP_GOAL = 2.0  # seconds, a fuzzing worker's start-up
# fuzz_sessions.py's names of a worker's start-up phases (invariants/fuzzing/startup.py).
WORKER_PHASES = ("fork", "worker collection", "worker database", "first example")


@dataclass(frozen=True)
class Outcome:
    """One benchmark script's run: its exit code, its cost and the JSON it wrote."""

    name: str
    command: tuple[str, ...]
    exit_code: int
    wall_seconds: float
    cpu_seconds: float
    data: dict[str, Any] | None  # None: it wrote no JSON


@dataclass(frozen=True)
class Row:
    """One line of the final table."""

    figure: str
    measured: str
    goal: str
    met: bool | None  # None: not judged (a quick run's subset, or no figures)
    note: str = ""


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--skip", nargs="+", choices=FIGURES, default=[], metavar="NAME",
                        help=f"leave figures out: {', '.join(FIGURES)}")
    parser.add_argument("--quick", action="store_true",
                        help="small sizes: a smoke run, prove and mutate goals not judged")
    parser.add_argument("--baseline", metavar="REV", default=None,
                        help="also run the mutation figure at REV (a temporary worktree)")
    parser.add_argument("--mutations-against", type=Path, default=None, metavar="FILE",
                        help="compare the mutation verdicts with those of an earlier run "
                        "(mutation_score.py --json FILE), instead of running --baseline")
    parser.add_argument("--json", type=Path, default=None, metavar="FILE",
                        help="also write the table, every script's run and the comparison")
    args = parser.parse_args(argv)
    if (args.baseline or args.mutations_against) is not None and "mutate" in args.skip:
        parser.error("--baseline and --mutations-against are for the mutation figure, which "
                     "--skip leaves out")
    if args.baseline is not None and args.mutations_against is not None:
        parser.error("--baseline and --mutations-against are two ways to one comparison: "
                     "give one")
    return args


def script_options(figure: str, quick: bool) -> list[str]:
    """The options `figure`'s script runs with (without --json)."""
    if figure == "check":
        return ["--current-only", "--jobs", "0", "--repeat", "1" if quick else "3"]
    if figure == "prove":
        return ["--jobs", "2", "--parallel-only", *([] if quick else ["--full"])]
    if figure == "mutate":
        return ["--jobs", "2", *(["--sample", "6", "--seed", "1"] if quick else [])]
    if figure == "fuzz":
        return ["--skip-reference", "--skip-mutants", "--startup", "1" if quick else "5",
                *(["--minutes", "0.1"] if quick else [])]
    if figure == "scan":
        return ["--limit", "20", "--repeat", "1"] if quick else []
    raise ValueError(f"unknown figure {figure!r}")


def read_json(path: Path) -> dict[str, Any] | None:
    """A script's JSON output; None when it wrote none or not an object."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def run_script(name: str, root: Path, script: str, options: Sequence[str],
               out: Path) -> Outcome:
    """`root/benchmarks/script options --json out`, importing from `root`, output shown."""
    command = (sys.executable, str(root / "benchmarks" / script), *options, "--json", str(out))
    print(f"\n== {name}: {' '.join(command[1:])}", flush=True)
    env = dict(os.environ, PYTHONPATH=str(root))
    env.pop("PYTEST_ADDOPTS", None)
    cpu, started = check_time._children_cpu(), time.perf_counter()
    done = subprocess.run(command, cwd=root, env=env, check=False)
    wall = time.perf_counter() - started
    return Outcome(name, command, done.returncode, wall, check_time._children_cpu() - cpu,
                   read_json(out))


def check_row(data: dict[str, Any]) -> Row:
    side = data["summaries"][0]
    wall = side["wall_median"]
    return Row("check", f"wall {wall:.1f} s median of {side['runs']} "
               f"(CPU {side['cpu_median']:.1f} s)", f"<= {check_time.GOAL_SECONDS:g} s wall",
               wall <= check_time.GOAL_SECONDS)


def prove_row(data: dict[str, Any], full: bool) -> Row:
    side = data["summaries"][-1]  # the K-jobs side (the only one with --parallel-only)
    wall = side["wall_median"]
    same = "" if data.get("same_matrix") else ", matrices DIFFER"
    return Row(f"prove ({side['jobs']} jobs)", f"wall {wall:.1f} s, CPU "
               f"{side['cpu_median']:.1f} s{same}", f"<= {PROVE_GOAL:g} s wall",
               wall <= PROVE_GOAL if full else None,
               "" if full else "a subset of mutants: the goal is the full matrix's")


def mutate_row(data: dict[str, Any], full: bool, label: str = "mutate") -> Row:
    survived = len(data["survived"]) + len(data["blind"])
    score = "n/a" if data["score"] is None else f"{data['score']:.4f}"
    return Row(label, f"wall {data['seconds']:.0f} s, CPU {data['cpu_seconds']:.0f} s; "
               f"{data['total']} mutants, score {score}, killed {data['killed']}, "
               f"survived {survived}", f"<= {MUTATE_GOAL:g} s wall",
               data["seconds"] <= MUTATE_GOAL if full else None,
               "" if full else "a sample: the goal is every mutant's")


def fuzz_row(data: dict[str, Any]) -> Row:
    figures = data["startup"]
    phases = figures["phases"]
    missing = [p for p in WORKER_PHASES if p not in phases]
    box = figures["box_started_median"]
    whole = "never started" if box is None else f"{box:.2f} s"
    if missing:  # a worker phase never logged: no per-worker figure to judge
        return Row("fuzz start-up", f"no worker figure ({', '.join(missing)} missing); "
                   f"whole start-up {whole}", f"<= {WORKER_STARTUP_GOAL:g} s per worker", None)
    worker = sum(phases[p]["median"] for p in WORKER_PHASES)
    return Row("fuzz start-up", f"per worker {worker:.2f} s (median of {figures['sessions']}); "
               f"whole start-up {whole}", f"<= {WORKER_STARTUP_GOAL:g} s per worker",
               worker <= WORKER_STARTUP_GOAL)


def scan_row(data: dict[str, Any]) -> Row:
    corpora, goal = data["corpora"], data["cold_goal"]  # scan_speed.py's own goal
    # scan_speed.py names its small corpus "<stdlib> (140 files)"; the other is the stdlib.
    measured = "; ".join(
        f"{'small' if c['name'].endswith(' files)') else 'large'} {c['ratio']:.2f}x "
        f"({c['files']} files)" for c in corpora)
    return Row("scan cold/libcst", measured or "no corpus", f"<= {goal:.1f}x on every corpus",
               all(c["ratio"] <= goal for c in corpora) if corpora else None,
               f"--limit {data['limit']}" if data.get("limit") else "")


def figure_row(figure: str, outcome: Outcome, full: bool, label: str | None = None) -> Row:
    """The table's line for one script's run; its JSON missing or unreadable is said so."""
    readers: dict[str, Callable[[dict[str, Any]], Row]] = {
        "check": check_row, "prove": lambda d: prove_row(d, full),
        "mutate": lambda d: mutate_row(d, full, label or "mutate"),
        "fuzz": fuzz_row, "scan": scan_row,
    }
    name = label or figure
    if outcome.data is None:
        return Row(name, f"no figures (exit {outcome.exit_code})", "", None)
    try:
        row = readers[figure](outcome.data)
    except (KeyError, IndexError, TypeError) as exc:  # a script's JSON of another shape
        return Row(name, f"unreadable JSON ({type(exc).__name__}: {exc})", "", None)
    if outcome.exit_code != 0:
        row = Row(row.figure, row.measured, row.goal, row.met,
                  "; ".join(filter(None, [row.note, f"script exited {outcome.exit_code}"])))
    return row


def verdicts(data: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """Each mutant's (status, killing check) from mutation_score.py's JSON."""
    found: dict[str, tuple[str, str]] = {}
    for kill in data.get("kills", []):
        found[kill["id"]] = ("killed", f"{kill['check']} ({kill['phase']})")
    for key, status in (("survived", "survived"), ("blind", "survived"),
                        ("timeouts", "timeout"), ("incompetent", "incompetent"),
                        ("equivalent", "equivalent")):
        for mutant in data.get(key, []):
            found[mutant["id"]] = (status, "")
    return found


def compare_verdicts(current: dict[str, Any], baseline: dict[str, Any]) -> dict[str, Any]:
    """The mutants both runs judged, and those judged with another status or check."""
    now, before = verdicts(current), verdicts(baseline)
    both = sorted(now.keys() & before.keys())
    return {
        "compared": len(both),
        "other_status": [{"id": m, "current": list(now[m]), "baseline": list(before[m])}
                         for m in both if now[m][0] != before[m][0]],
        "other_check": [{"id": m, "current": now[m][1], "baseline": before[m][1]}
                        for m in both if now[m][0] == before[m][0] and now[m] != before[m]],
        "only_current": len(now.keys() - before.keys()),
        "only_baseline": len(before.keys() - now.keys()),
    }


def comparison_text(comparison: dict[str, Any], revision: str) -> str:
    same = not comparison["other_status"] and not comparison["other_check"]
    lines = [f"mutation verdicts, current against {revision}: {comparison['compared']} "
             f"mutants in both runs, {len(comparison['other_status'])} with another status, "
             f"{len(comparison['other_check'])} killed by another check "
             f"({'the same verdicts' if same else 'listed below'}); only in the current run "
             f"{comparison['only_current']}, only in the baseline {comparison['only_baseline']}"]
    for d in comparison["other_status"]:
        lines.append(f"  {d['id']}: current {' '.join(filter(None, d['current']))}, "
                     f"baseline {' '.join(filter(None, d['baseline']))}")
    for d in comparison["other_check"]:
        lines.append(f"  {d['id']}: killed by {d['current']} now, by {d['baseline']} before")
    return "\n".join(lines)


def render(rows: Sequence[Row], load_before: Sequence[float],
           load_after: Sequence[float]) -> str:
    """The final table: figure, measured, goal, verdict; then the load average."""
    def verdict(row: Row) -> str:
        judged = "n/a" if row.met is None else ("met" if row.met else "NOT met")
        return judged + (f" ({row.note})" if row.note else "")

    table = [("figure", "measured", "goal", "verdict")]
    table += [(r.figure, r.measured, r.goal, verdict(r)) for r in rows]
    widths = [max(len(line[i]) for line in table) for i in range(3)]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(line[:3], widths, strict=True))
             + "  " + line[3] for line in table]
    lines.append("load average (1, 5, 15 min): before "
                 + ", ".join(f"{x:.2f}" for x in load_before) + "; after "
                 + ", ".join(f"{x:.2f}" for x in load_after)
                 + f"; {os.cpu_count() or '?'} CPUs (information only: nothing fails on a time)")
    return "\n".join(lines) + "\n"


def failures(outcomes: Sequence[Outcome]) -> list[str]:
    """Every script that exited non-zero or wrote no JSON, named."""
    return [f"{o.name} ({Path(o.command[1]).name}): "
            + (f"exit {o.exit_code}" if o.exit_code else "no JSON")
            for o in outcomes if o.exit_code != 0 or o.data is None]


def _lacks_json(script: Path) -> str:
    """Why a baseline's mutation_score.py cannot give JSON, or "" (read, not run)."""
    try:
        text = script.read_text(encoding="utf-8")
    except OSError:
        return "has no benchmarks/mutation_score.py"
    return "" if "--json" in text else "has a benchmarks/mutation_score.py without --json"


def baseline_mutation(revision: str, quick: bool, scratch: Path) -> Outcome | str:
    """mutation_score.py at `revision`, in a worktree removed afterwards; a str says why not."""
    with check_time.worktree(revision) as tree:
        script = tree / "benchmarks" / "mutation_score.py"
        why = _lacks_json(script)
        if why:
            return f"{revision[:12]} {why}: the current side only"
        return run_script(f"mutate (baseline {revision[:12]})", tree, "mutation_score.py",
                          script_options("mutate", quick), scratch / "mutate-baseline.json")


def run_figures(args: argparse.Namespace, revision: str | None,
                scratch: Path) -> tuple[list[Row], list[Outcome], dict[str, Any] | None]:
    """Every figure not skipped, in order: the rows, the runs and the verdict comparison."""
    rows: list[Row] = []
    outcomes: list[Outcome] = []
    comparison: dict[str, Any] | None = None
    for figure in (f for f in FIGURES if f not in args.skip):
        outcome = run_script(figure, ROOT, SCRIPTS[figure], script_options(figure, args.quick),
                             scratch / f"{figure}.json")
        outcomes.append(outcome)
        rows.append(figure_row(figure, outcome, not args.quick))
        if figure == "mutate" and args.mutations_against is not None:
            saved = read_json(args.mutations_against)
            if saved is None:
                print(f"speed_report: {args.mutations_against}: no mutation_score.py JSON to "
                      "compare with", flush=True)
            elif outcome.data is not None:
                comparison = compare_verdicts(outcome.data, saved)
            continue
        if figure != "mutate" or revision is None:
            continue
        try:
            baseline = baseline_mutation(revision, args.quick, scratch)
        except subprocess.CalledProcessError as exc:  # git could not make the worktree
            baseline = f"no worktree of {revision[:12]}: {(exc.stderr or '').strip()}"
        label = f"mutate ({revision[:12]})"
        if isinstance(baseline, str):
            print(f"speed_report: {baseline}", flush=True)
            rows.append(Row(label, baseline, "", None))
            continue
        outcomes.append(baseline)
        rows.append(figure_row("mutate", baseline, not args.quick, label))
        if outcome.data is not None and baseline.data is not None:
            comparison = compare_verdicts(outcome.data, baseline.data)
    return rows, outcomes, comparison


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    revision = None
    if args.baseline is not None:
        try:
            revision = check_time._git("rev-parse", "--verify", f"{args.baseline}^{{commit}}")
        except subprocess.CalledProcessError:
            print(f"speed_report: unknown revision {args.baseline!r}", file=sys.stderr)
            return 2
    load_before = os.getloadavg()
    try:
        with tempfile.TemporaryDirectory(prefix="speed-report-") as scratch:
            rows, outcomes, comparison = run_figures(args, revision, Path(scratch))
    except KeyboardInterrupt:  # the worktree and the scratch directory are gone by now
        print("speed_report: interrupted, no report", file=sys.stderr)
        return 130
    load_after = os.getloadavg()
    print("\n== speed report" + (" (--quick: a smoke run)" if args.quick else ""))
    sys.stdout.write(render(rows, load_before, load_after))
    if comparison is not None:
        against = revision[:12] if revision is not None else str(args.mutations_against)
        print(comparison_text(comparison, against))
    failed = failures(outcomes)
    if args.json is not None:
        args.json.write_text(json.dumps({
            "quick": args.quick, "baseline": revision, "figures": [asdict(r) for r in rows],
            "runs": [{k: v for k, v in asdict(o).items() if k != "data"} for o in outcomes],
            "verdicts": comparison, "failed": failed, "load_before": list(load_before),
            "load_after": list(load_after), "cpus": os.cpu_count(),
        }, indent=2) + "\n", encoding="utf-8")
    for line in failed:
        print(f"speed_report: failed: {line}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
