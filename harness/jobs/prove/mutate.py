"""`python -m harness prove --mutate [PATH ...]`: the mutation score of a mesh.

Cosmic Ray's operators over the mesh source (PATHs, else `[tool.harness] mutate_paths`,
else the bundled reference mesh); each mutant through the scan and the invariants, stopping
at the first kill. Exit 0 with the report; 1 when the score is under `--fail-under`;
2 on a usage or configuration error (one line naming the file and the key).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from harness.settings import HarnessSettings
from invariants.mutants.matrix import reference_scan_config
from invariants.mutants.score import report
from invariants.mutants.score.cache import VerdictCache
from invariants.mutants.score.engine import EngineMissing
from invariants.mutants.score.run import Options, run_score
from invariants.mutants.score.target import MeshTarget, TargetError, from_paths, reference_target
from invariants.mutants.score.triage import FILENAME, TriageError, load


def add_options(parser: Any) -> None:
    group = parser.add_argument_group("mutation score (--mutate)")
    group.add_argument("--mutate", nargs="*", metavar="PATH", default=None,
                       help="run Cosmic Ray's mutants of these files or packages (default: "
                       "[tool.harness] mutate_paths, else the bundled reference mesh) through "
                       "every check and print the mutation score")
    group.add_argument("--sample", type=int, metavar="N", default=None,
                       help="only N mutants, drawn with --seed (deterministic)")
    group.add_argument("--seed", type=int, default=0, help="the sample's seed (default 0)")
    group.add_argument("--jobs", type=int, metavar="K", default=1,
                       help="worker processes (default 1)")
    group.add_argument("--timeout", type=float, metavar="SECONDS", default=120.0,
                       help="a mutant running longer is timed out (default 120)")
    group.add_argument("--triage", type=Path, metavar="FILE", default=None,
                       help=f"equivalent mutants and exclusions (default: {FILENAME} beside "
                       "pyproject.toml)")
    group.add_argument("--no-cache", action="store_true",
                       help="run every mutant again instead of reusing cached verdicts")
    group.add_argument("--fail-under", type=float, metavar="SCORE", default=None,
                       help="exit 1 when the score is below SCORE (0-1)")


def _usage(args: argparse.Namespace) -> str | None:
    if args.mutant or args.check or args.expected_only or args.search_only:
        return "--mutant, --check, --expected-only and --search-only are the kill matrix's"
    if args.sample is not None and args.sample < 1:
        return f"--sample: must be at least 1, got {args.sample}"
    if args.jobs < 1:
        return f"--jobs: must be at least 1, got {args.jobs}"
    if args.timeout <= 0:
        return f"--timeout: must be positive, got {args.timeout:g}"
    if args.fail_under is not None and not 0 <= args.fail_under <= 1:
        return f"--fail-under: a score between 0 and 1, got {args.fail_under:g}"
    return None


def _target(args: argparse.Namespace, settings: HarnessSettings) -> MeshTarget:
    if args.mutate:
        paths: tuple[Path, ...] | None = tuple(Path(p).absolute() for p in args.mutate)
        origin = "prove --mutate"
    else:
        paths = settings.mutate_paths
        origin = f"{settings.pyproject}: [tool.harness] mutate_paths"
    if paths is None:
        try:
            return reference_target(reference_scan_config())
        except ValueError as exc:
            raise TargetError(str(exc)) from None
    if len(settings.adapters) != 1:
        raise TargetError(f"{settings.adapter_origin}: --mutate drives one adapter, "
                          f"got {len(settings.adapters)}")
    return from_paths(paths, settings.adapters[0], settings.scan, checks=settings.invariants,
                      params=settings.params, origin=origin)


def run(args: argparse.Namespace, settings: HarnessSettings) -> int:
    problem = _usage(args)
    if problem is not None:
        print(f"mesh-harness prove: {problem}", file=sys.stderr)
        return 2
    try:
        target = _target(args, settings)
        triage = load(args.triage or settings.root / FILENAME)
        if args.triage is not None and not args.triage.exists():
            raise TriageError(f"{args.triage}: triage file not found")
        scored = run_score(
            target, triage,
            Options(profile=args.profile, sample=args.sample, seed=args.seed, jobs=args.jobs,
                    timeout=args.timeout),
            cache=None if args.no_cache else VerdictCache(settings.cache_dir / "mutants"),
            progress=lambda line: print(line, file=sys.stderr, flush=True),
        )
    except (TargetError, TriageError, EngineMissing) as exc:
        print(f"mesh-harness prove: error: {exc}", file=sys.stderr)
        return 2
    if args.format == "json":
        print(json.dumps(report.to_json(scored), indent=2))
    else:
        print(report.to_text(scored), end="")
    value = report.score(scored)
    if args.fail_under is not None and (value is None or value < args.fail_under):
        print(f"mesh-harness prove: score {value if value is not None else 'n/a'} is under "
              f"--fail-under {args.fail_under:g}", file=sys.stderr)
        return 1
    return 0
