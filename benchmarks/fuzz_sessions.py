"""Fuzzing-session measurements: throughput on the reference mesh, time to find each mutant.

    python benchmarks/fuzz_sessions.py [--reference-minutes 5] [--mutant-seconds 90]
                                       [--workers 2] [--skip-reference] [--mutants M1 M2 ...]

1. One session of `--reference-minutes` with `--workers` workers over every invariant on
   the reference mesh: examples per second per worker, examples per test, and which goals
   were reached (and which never were).
2. For each mutant M1–M13, a session over the dynamic checks that must kill it, stopped at
   the first failure HypoFuzz saves (`--stop-on-failure`; it saves one as soon as it finds
   it), capped at `--mutant-seconds`: seconds from the start of the session (collection
   included) until the failure was in the database, polled once a second; "not found"
   when the cap came first.

Each session uses its own fresh directory database, so no session replays another's
failures. A script, not a test: HypoFuzz is randomized and the numbers depend on the
machine and its load.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from invariants.mutants.registry import MUTANTS, select_mutants


def _session(work: Path, name: str, args: list[str]) -> dict[str, Any]:
    summary = work / f"{name}.json"
    command = [sys.executable, "-m", "harness", "fuzz", "--database", str(work / f"{name}-db"),
               "--json", str(summary), *args]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if not summary.exists():
        raise SystemExit(f"{name}: no summary (exit {result.returncode}):\n{result.stderr}")
    data: dict[str, Any] = json.loads(summary.read_text(encoding="utf-8"))
    data["exit_code"] = result.returncode
    return data


def reference(work: Path, minutes: float, workers: int) -> None:
    data = _session(work, "reference", ["--minutes", str(minutes), "--workers", str(workers)])
    seconds = data["elapsed_seconds"]
    print(f"reference mesh: {data['workers']} workers, {seconds:.0f} s, "
          f"exit {data['exit_code']}, failures {len(data['failures'])}")
    for index, count in enumerate(data["examples_per_worker"], 1):
        print(f"  worker {index}: {count} examples, {count / seconds:.2f} examples/s")
    for check, test in data["tests"].items():
        print(f"  {check}: {test['examples']} examples, {len(test['goals'])} goals reached")
    reached = {goal: n for goal, n in data["goals"].items() if n}
    print("  goals reached (examples): " + ", ".join(f"{g} {n}" for g, n in reached.items()))
    print("  never reached: " + (", ".join(data["never_reached"]) or "none"))


def mutants(work: Path, names: list[str] | None, seconds: float, workers: int) -> None:
    print(f"mutants (cap {seconds:.0f} s, up to {workers} workers, stop at the first failure):")
    for mutant in select_mutants(names):
        checks = [k for k in mutant.kills if k.startswith("INV")]
        data = _session(work, mutant.id, [
            "--mutant", mutant.id, "--invariant", *checks, "--minutes", str(seconds / 60),
            "--workers", str(workers), "--stop-on-failure",
        ])
        saved = data["first_failure_seconds"]
        found = [f["check"] for f in data["failures"] if f["reproduces"]]
        verdict = (
            f"first failure saved after {saved:.1f} s ({', '.join(found) or 'not reproduced'})"
            if saved is not None
            else "not found in time"
        )
        print(f"  {mutant.id} {mutant.slug} [{', '.join(checks)}]: {verdict} "
              f"(ran {data['elapsed_seconds']:.0f} s, {data['workers']} worker(s))")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference-minutes", type=float, default=5.0)
    parser.add_argument("--mutant-seconds", type=float, default=90.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--skip-reference", action="store_true")
    parser.add_argument("--mutants", nargs="*", default=[m.id for m in MUTANTS])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="fuzz-bench-") as scratch:
        work = Path(scratch)
        if not args.skip_reference:
            reference(work, args.reference_minutes, args.workers)
        if args.mutants:
            mutants(work, args.mutants, args.mutant_seconds, args.workers)
    return 0


if __name__ == "__main__":
    sys.exit(main())
