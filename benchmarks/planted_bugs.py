"""A mesh's planted bugs, measured: which the harness catches, and how soon.

    python benchmarks/planted_bugs.py --repo examples/switchboard-repo [--seeds N]
        [--max-examples N] [--only b01,b02] [--kinds race,ordinary] [--json FILE]

The repository's `PLANTED.json` lists its planted bugs, each with its adapter factory
(`module:attribute`), its kind (`static`, `ordinary`, `race`, or `network`: it needs a
fault of the simulated network, and with `"schedule"` among its `needs` a same-instant
order FIFO never picks too) and what it breaks (a static rule `MESH00n` or an invariant
`INVn`). Its `[tool.harness]` gives the adapter's
parameters. Per bug:

- **static**: caught where `python -m harness scan --format json` in the repository reports
  a finding of that rule, with an empty baseline in place of the repository's own;
- **ci**: the invariant it breaks, run as `check` runs it (the `ci` profile, derandomized,
  its seed programs first): caught where the verdict is a violation; with `--via-check`,
  `check --format json` itself in a copy of the repository whose adapter is the bug's
  factory (every run judged by every checker), the bug's row (and other failing rows);
- **examples** (with `--seeds N`): examples to the first failure, the median over N runs
  seeded by their number (Hypothesis' global seed; no database, no shrinking), at most
  `--max-examples` each; `-` where no run found it, and how many did. The bug's invariant
  runs alone, judged by its own checker; with `--whole-check`, as `check` finds it: every
  invariant run once (each at most `--max-examples`), every run judged by every checker,
  the fewest examples any one run took to see the bug's invariant violated (the runs are
  independent: `check --jobs` runs them side by side);
- `--strategy scripts|pct|uniform`: every example draws that schedule strategy alone
  instead of the portfolio (`invariants.dynamic.plans.SCHEDULE_STRATEGIES`), for the
  figures of each strategy beside the portfolio's (no FIFO column: FIFO draws none);
- **FIFO** (races, with `--seeds`): the same seeded runs with the loop's chooser answering
  0 everywhere: a race FIFO finds is no same-instant race; likewise for a network bug
  that needs a schedule deviation too (`"schedule"` among its `needs`), with the
  network's faults drawn. That a network bug needs its fault at all is its repository's
  `planted_proofs/` to show: hiding the network from a run would hide it from the
  checkers too, which then judge a networked mesh as a single process.

A script, not a test: the figures depend on Hypothesis' version and the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from seeded_runs import factory_named, found_by_check, found_in, repo_params  # siblings

from invariants.adapter import Chooser, FirstChooser
from invariants.dynamic import plans
from invariants.dynamic.runner import run_invariant


@dataclass
class Row:
    name: str
    kind: str
    breaks: str
    ci: str = "-"  # caught / missed / error: <line>
    examples: list[int | None] = field(default_factory=list)
    fifo: list[int | None] = field(default_factory=list)
    needs: list[str] = field(default_factory=list)
    seconds: float = 0.0


def _fifo(made: Callable[[Chooser], Any]) -> Callable[[Chooser], Any]:
    def factory(chooser: Chooser) -> Any:
        return made(FirstChooser())

    factory.__name__ = factory.__qualname__ = getattr(made, "__name__", "factory") + "_fifo"
    return factory


def _scan_rules(repo: Path) -> set[str]:
    """The rule ids of the findings `scan` reports in the repository, its baseline set
    aside (a repository's baseline may accept its planted static bugs: its clean mesh
    then passes `check`)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(repo / "src"),
                                                        os.environ.get("PYTHONPATH", "")])}
    with tempfile.TemporaryDirectory() as scratch:
        empty = Path(scratch) / "baseline.json"
        empty.write_text(json.dumps({"version": 1, "entries": []}), encoding="utf-8")
        done = subprocess.run([sys.executable, "-m", "harness", "scan", "--format", "json",
                               "--baseline", str(empty)],
                              cwd=repo, env=env, capture_output=True, text=True, check=False)
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        raise SystemExit(f"scan gave no JSON: {done.stdout[-500:]}{done.stderr[-500:]}") from None
    findings = report.get("findings", report) if isinstance(report, dict) else report
    return {str(item.get("rule") or item.get("rule_id") or item.get("id"))
            for item in findings if isinstance(item, dict)}


def _via_check(repo: Path, factory: str, breaks: str) -> str:
    """`python -m harness check --format json` in a copy of `repo` whose adapter is
    `factory`: the verdict of the `breaks` row (other failing rows named)."""
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / repo.name
        shutil.copytree(repo, copy, ignore=shutil.ignore_patterns(
            "__pycache__", ".hypothesis", ".harness-cache", ".pytest_cache"))
        pyproject = copy / "pyproject.toml"
        text = pyproject.read_text(encoding="utf-8")
        text = re.sub(r'(?m)^adapter = ".*"$', f'adapter = "{factory}"', text, count=1)
        pyproject.write_text(text, encoding="utf-8")
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            [str(copy / "src"), os.environ.get("PYTHONPATH", "")])}
        done = subprocess.run([sys.executable, "-m", "harness", "check", "--format", "json",
                               "--quiet", "--jobs", "1"], cwd=copy, env=env,
                              capture_output=True, text=True, check=False)
    try:
        report = json.loads(done.stdout)["invariants"]
    except (json.JSONDecodeError, KeyError):
        return f"error: {(done.stdout + done.stderr).strip()[-160:]}"
    rows = {row["check"]: row for row in report}
    others = sorted(c for c, row in rows.items()
                    if row["verdict"] not in ("pass", "not applicable") and c != breaks)
    row = rows.get(breaks, {"verdict": "absent"})
    verdict = row["verdict"]
    shown = "caught" if verdict == "violation" else "missed" if verdict == "pass" else verdict
    text = row.get("failure") or row.get("evidence")  # a failing row's text
    lines = text.splitlines() if isinstance(text, str) else []
    line = next((each for each in lines if each.startswith(f"{breaks}:")), "")
    return shown + (f" (also {', '.join(others)})" if others else "") + (
        f" — {line[:140]}" if line else "")


def measure(entry: dict[str, Any], params: Any, scan_rules: set[str] | None, seeds: int,
            max_examples: int, repo: Path | None = None, fifo: bool = True,
            whole_check: bool = False) -> Row:
    """One bug; with `repo`, its ci verdict is `check`'s, every row judging every run;
    `whole_check`: its examples counted as `check` finds it (`found_by_check`)."""
    started = time.perf_counter()
    row = Row(str(entry["name"]), str(entry["kind"]), str(entry["breaks"]),
              needs=[str(n) for n in entry.get("needs", [])])
    if row.kind == "static":
        row.ci = "caught" if scan_rules is not None and row.breaks in scan_rules else "missed"
    else:
        made = factory_named(str(entry["factory"]))
        if repo is not None:
            row.ci = _via_check(repo, str(entry["factory"]), row.breaks)
        else:
            outcome = run_invariant(row.breaks, made, "ci", params=params)
            if outcome.verdict == "violation":
                row.ci = "caught"
            elif outcome.verdict == "pass":
                row.ci = "missed"
            else:
                first = (outcome.failure_text or "").strip().splitlines()[:1]
                row.ci = f"{outcome.verdict}: {first[0] if first else ''}"[:160]
        find = found_by_check if whole_check else found_in
        for seed in range(seeds):
            row.examples.append(find(row.breaks, made, seed, max_examples, params=params))
            if fifo and (row.kind == "race" or "schedule" in row.needs):
                row.fifo.append(find(row.breaks, _fifo(made), seed, max_examples,
                                     params=params))
    row.seconds = time.perf_counter() - started
    return row


def _median(found: Sequence[int | None]) -> str:
    hits = [n for n in found if n is not None]
    if not found:
        return ""
    if not hits:
        return f"- (0/{len(found)})"
    return f"{statistics.median(hits):g} ({len(hits)}/{len(found)})"


def table(rows: Sequence[Row]) -> str:
    head = ["bug", "kind", "needs", "breaks", "ci", "median examples", "FIFO", "seconds"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        lines.append("| " + " | ".join([r.name, r.kind, ", ".join(r.needs), r.breaks, r.ci,
                                         _median(r.examples), _median(r.fifo),
                                         f"{r.seconds:.0f}"]) + " |")
    caught = sum(r.ci.startswith("caught") for r in rows)
    lines.append(f"\n{caught} of {len(rows)} caught in ci")
    for kind in ("static", "ordinary", "race", "network"):
        some = [r for r in rows if r.kind == kind]
        if some:
            lines.append(f"  {kind}: {sum(r.ci.startswith('caught') for r in some)} of "
                         f"{len(some)}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--seeds", type=int, default=0)
    parser.add_argument("--max-examples", type=int, default=200)
    parser.add_argument("--only", default="", help="comma-separated bug names")
    parser.add_argument("--kinds", default="", help="comma-separated kinds")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--via-check", action="store_true",
                        help="the ci verdict from `check` in a copy of the repository")
    parser.add_argument("--whole-check", action="store_true",
                        help="count examples as `check` finds the bug: every invariant run "
                        "once, every run judged by every checker")
    parser.add_argument("--strategy", choices=sorted(plans.SCHEDULE_STRATEGIES), default=None,
                        help="draw only this schedule strategy (default: the portfolio); "
                        "not with --via-check")
    args = parser.parse_args(argv)
    if args.strategy is not None:
        if args.via_check:
            parser.error("--strategy measures this process's runs: not with --via-check")
        plans.schedule_portfolio = (args.strategy,)
    fifo = not args.strategy  # FIFO draws no strategy: its figure is the portfolio run's
    repo = args.repo.resolve()
    manifest = json.loads((repo / "PLANTED.json").read_text(encoding="utf-8"))
    only = {n for n in args.only.split(",") if n}
    kinds = {k for k in args.kinds.split(",") if k}
    entries = [e for e in manifest
               if (not only or e["name"] in only) and (not kinds or e["kind"] in kinds)]
    sys.path.insert(0, str(repo / "src"))
    params = repo_params(repo)
    scan_rules = _scan_rules(repo) if any(e["kind"] == "static" for e in entries) else None
    rows = []
    for entry in entries:
        row = measure(entry, params, scan_rules, args.seeds, args.max_examples,
                      repo if args.via_check else None, fifo, args.whole_check)
        print(f"  {row.name} ({row.kind}, {row.breaks}): {row.ci}  {_median(row.examples)}  "
              f"[{row.seconds:.0f} s]", flush=True)
        rows.append(row)
    print(table(rows))
    if args.json is not None:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
