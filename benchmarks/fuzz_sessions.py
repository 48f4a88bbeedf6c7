"""Fuzzing-session measurements: does every short session find each mutant's bug, and
does a short session on the reference mesh reach every invariant?

    python benchmarks/fuzz_sessions.py [--sessions 10] [--minutes 0.3] [--workers 2]
                                       [--mutants M1 M2 ...] [--kills-only]
                                       [--skip-reference] [--skip-mutants] [--startup N]
                                       [--json FILE]

1. Reference: one session of `--minutes` with `--workers` workers over every invariant on
   the reference mesh: examples per test (the goal: every test > 0), HypoFuzz's kept
   behaviours per test, the session's exit code.
2. Mutants: for each registered mutant, `--sessions` sessions of `--minutes` with
   `--workers` workers over every invariant (`--kills-only`: only the dynamic checks that
   must kill it), each stopped at its first saved failure (`--stop-on-failure`): how many
   sessions found the failure (the goal: all of them) and the median seconds from the
   start of a session (start-up included) until the failure was in the database, polled
   once a second.
3. Start-up (`--startup N`; default 0, skipped): N sessions of `--minutes` with `--workers`
   workers on the reference mesh, and for each phase of start-up (hub imports, hub
   collection, fork, worker collection, worker database, first example; a worker's phase
   is the slowest worker's, from the session's `startup_phases`) the median seconds, then
   the median seconds until the box's clock started (every worker had run an example) and
   the load average before and after.

Each session uses its own fresh directory database, so no session replays another's
failures. `--json FILE` also writes the printed figures, one object per part that ran
("reference", "mutants", "startup"). A script, not a test: HypoFuzz is randomized and the
numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
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
    data["process_exit"] = result.returncode
    return data


def reference(work: Path, minutes: float, workers: int) -> dict[str, Any]:
    data = _session(work, "reference", ["--minutes", str(minutes), "--workers", str(workers)])
    tests = data["tests"]
    print(f"reference mesh: {minutes:g} min, {data['workers']} workers, ran "
          f"{data['elapsed_seconds']:.0f} s, exit {data['process_exit']}, first example after "
          f"{data['startup_seconds'] or 0:.1f} s, failures {len(data['failures'])}")
    for check, test in tests.items():
        print(f"  {check}: {test['examples']} examples ({test['seconds']:.1f} s), "
              f"{len(test['goals_reached'])} goals, {test['behaviours']} behaviours, "
              f"{test['fingerprints']} fingerprints")
    every = all(t["examples"] > 0 for t in tests.values())
    print(f"  every test ran: {'yes' if every else 'NO'}; never reached: "
          + (", ".join(data["never_reached"]) or "none"))
    return {"minutes": minutes, "workers": data["workers"], "exit": data["process_exit"],
            "elapsed_seconds": data["elapsed_seconds"],
            "startup_seconds": data["startup_seconds"], "failures": len(data["failures"]),
            "examples": {check: test["examples"] for check, test in tests.items()},
            "every_test_ran": every, "never_reached": data["never_reached"]}


def mutants(
    work: Path, names: list[str] | None, sessions: int, minutes: float, workers: int,
    kills_only: bool,
) -> dict[str, Any]:
    scope = "the checks that must kill it" if kills_only else "every invariant"
    print(f"mutants: {sessions} session(s) each of {minutes:g} min, {workers} workers, over "
          f"{scope}, stopped at the first saved failure:")
    figures: dict[str, Any] = {"sessions": sessions, "minutes": minutes, "workers": workers,
                               "kills_only": kills_only, "mutants": {}}
    for mutant in select_mutants(names):
        checks = [k for k in mutant.kills if k.startswith("INV")]
        found: list[float] = []
        for index in range(sessions):
            args = ["--mutant", mutant.id, "--minutes", str(minutes),
                    "--workers", str(workers), "--stop-on-failure"]
            if kills_only:
                args += ["--invariant", *checks]
            data = _session(work, f"{mutant.id}-{index}", args)
            saved = data["first_failure_seconds"]
            if data["failed"] and saved is not None:
                found.append(float(saved))
        median = f"median {statistics.median(found):.1f} s" if found else "no failure"
        spread = f" (min {min(found):.1f}, max {max(found):.1f})" if found else ""
        print(f"  {mutant.id} {mutant.slug} [kills {', '.join(checks)}]: found in "
              f"{len(found)}/{sessions}, first saved failure {median}{spread}", flush=True)
        figures["mutants"][mutant.id] = {
            "found": len(found), "median_seconds": statistics.median(found) if found else None,
            "min_seconds": min(found, default=None), "max_seconds": max(found, default=None)}
    return figures


def startup(work: Path, sessions: int, minutes: float, workers: int) -> dict[str, Any]:
    load_before = os.getloadavg()
    load = " ".join(f"{v:.2f}" for v in load_before)
    phases: dict[str, list[float]] = {}
    started: list[float] = []
    for index in range(sessions):
        data = _session(work, f"startup-{index}",
                        ["--minutes", str(minutes), "--workers", str(workers)])
        for phase, seconds in data["startup_phases"].items():
            phases.setdefault(phase, []).append(float(seconds))
        if data["box_started_seconds"] is not None:
            started.append(float(data["box_started_seconds"]))
    print(f"start-up: {sessions} session(s) of {minutes:g} min, {workers} workers, reference "
          "mesh (median seconds per phase; a worker's phase: the slowest worker's)")
    for phase, seconds in phases.items():
        print(f"  {phase:<18} {statistics.median(seconds):5.2f} s "
              f"(min {min(seconds):.2f}, max {max(seconds):.2f})")
    box = f"{statistics.median(started):.2f} s" if started else "never (the start-up limit)"
    print(f"  box clock started after {box}, in {len(started)}/{sessions} session(s)")
    load_after = os.getloadavg()
    print(f"  load average before: {load}; after: " + " ".join(f"{v:.2f}" for v in load_after))
    return {"sessions": sessions, "minutes": minutes, "workers": workers,
            "phases": {phase: {"median": statistics.median(seconds), "min": min(seconds),
                               "max": max(seconds)} for phase, seconds in phases.items()},
            "box_started_median": statistics.median(started) if started else None,
            "box_started_sessions": len(started),
            "load_before": list(load_before), "load_after": list(load_after)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--minutes", type=float, default=0.3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--mutants", nargs="*", default=[m.id for m in MUTANTS])
    parser.add_argument("--kills-only", action="store_true")
    parser.add_argument("--skip-reference", action="store_true")
    parser.add_argument("--skip-mutants", action="store_true")
    parser.add_argument("--startup", type=int, default=0, metavar="N",
                        help="also N sessions measuring start-up, phase by phase")
    parser.add_argument("--json", type=Path, default=None, metavar="FILE",
                        help="also write the printed figures as JSON")
    args = parser.parse_args()
    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="fuzz-bench-") as scratch:
        work = Path(scratch)
        if not args.skip_reference:
            figures["reference"] = reference(work, args.minutes, args.workers)
        if args.mutants and not args.skip_mutants:
            figures["mutants"] = mutants(work, args.mutants, args.sessions, args.minutes,
                                         args.workers, args.kills_only)
        if args.startup:
            figures["startup"] = startup(work, args.startup, args.minutes, args.workers)
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
