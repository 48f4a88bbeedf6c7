"""`python -m harness prove --mutate [PATH ...]`: the mutation score of a mesh.

Cosmic Ray's operators over the mesh source (PATHs, else `[tool.harness] mutate_paths`,
else the bundled reference mesh); each mutant through the scan and the invariants, stopping
at the first kill. Exit 0 with the report; 1 when the score is under `--fail-under`, or,
with `--verify-triage` (which runs the triaged-equivalent mutants too), when a triage entry
is stale: it matches no mutant, or a check kills the mutant it names; 2 on a usage or
configuration error (one line naming the file and the key).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from harness.settings import HarnessSettings, invariant_ids
from harness.workers import jobs_problem, worker_count
from invariants import interrupts
from invariants.mutants.matrix import reference_scan_config
from invariants.mutants.score import report
from invariants.mutants.score.baseline import measure
from invariants.mutants.score.cache import VerdictCache
from invariants.mutants.score.evaluate import Baseline, judge
from invariants.mutants.score.run import Options, ScoreRun, run_score
from invariants.mutants.score.session import (
    config_text,
    filter_session,
    interrupted_line,
    read_session,
    verdict_line,
)
from invariants.mutants.score.target import MeshTarget, TargetError, from_paths, reference_target
from invariants.mutants.score.triage import FILENAME, Triage, TriageError, load
from invariants.user_errors import UserError


def add_options(parser: Any) -> None:
    group = parser.add_argument_group("mutation score (--mutate)")
    group.add_argument("--mutate", nargs="*", metavar="PATH", default=None,
                       help="run Cosmic Ray's mutants of these files or packages (default: "
                       "[tool.harness] mutate_paths, else the bundled reference mesh) through "
                       "every check and print the mutation score")
    group.add_argument("--sample", type=int, metavar="N", default=None,
                       help="only N mutants, drawn with --seed (deterministic)")
    group.add_argument("--seed", type=int, default=0, help="the sample's seed (default 0)")
    group.add_argument("--timeout", type=float, metavar="SECONDS", default=60.0,
                       help="a mutant using more CPU seconds is timed out "
                       "(default 60: five times a survivor)")
    group.add_argument("--triage", type=Path, metavar="FILE", default=None,
                       help="equivalent and known-blind mutants, and exclusions (default: "
                       f"{FILENAME} beside pyproject.toml)")
    group.add_argument("--verify-triage", action="store_true",
                       help="run the triaged-equivalent mutants too, and exit 1 when a check "
                       "kills one or a triage entry matches no mutant (a stale entry)")
    group.add_argument("--only-triaged", action="store_true",
                       help="with --verify-triage: run (and --sample from) the triaged "
                       "mutants only, [[equivalent]] and [[blind]]")
    guidance = group.add_mutually_exclusive_group()
    guidance.add_argument("--guided", action="store_true", default=None,
                          help="judge each mutant only by the checks whose runs on the "
                          "unmutated mesh reach its statement (coverage; the same verdicts; "
                          "measuring costs more, once). Default: when 200 mutants or more "
                          "are to run, in a derandomized profile without a database")
    guidance.add_argument("--unguided", dest="guided", action="store_false",
                          help="judge every mutant by every check")
    group.add_argument("--no-cache", action="store_true",
                       help="run every mutant again instead of reusing cached verdicts")
    group.add_argument("--fail-under", type=float, metavar="SCORE", default=None,
                       help="exit 1 when the score is below SCORE (0-1)")
    cosmic = parser.add_argument_group(
        "across machines: Cosmic Ray's session and HTTP workers (docs/mutation-score.md)")
    cosmic.add_argument("--cosmic-ray-config", type=Path, metavar="FILE", default=None,
                        help="write a Cosmic Ray configuration for this mesh and exit")
    cosmic.add_argument("--worker-url", action="append", metavar="URL", default=[],
                        help="a `cosmic-ray http-worker` for that configuration; repeatable "
                        "(none: Cosmic Ray's local distributor)")
    cosmic.add_argument("--filter-session", type=Path, metavar="SESSION", default=None,
                        help="mark the excluded and equivalent mutants of a `cosmic-ray "
                        "init` session as skipped, and exit")
    cosmic.add_argument("--from-session", type=Path, metavar="SESSION", default=None,
                        help="report the score of a Cosmic Ray session instead of running")
    cosmic.add_argument("--in-place", action="store_true",
                        help="Cosmic Ray's test command: judge the mesh as it is on disk, "
                        "print one verdict line, exit 1 when a check kills it")


def _usage(args: argparse.Namespace) -> str | None:
    if args.mutant or args.expected_only or args.search_only:
        return "--mutant, --expected-only and --search-only are the kill matrix's"
    if args.sample is not None and args.sample < 1:
        return f"--sample: must be at least 1, got {args.sample}"
    if (problem := jobs_problem(args.jobs)) is not None:
        return problem
    if args.timeout <= 0:
        return f"--timeout: must be positive, got {args.timeout:g}"
    if args.fail_under is not None and not 0 <= args.fail_under <= 1:
        return f"--fail-under: a score between 0 and 1, got {args.fail_under:g}"
    return _triage_usage(args)


def _triage_usage(args: argparse.Namespace) -> str | None:
    if args.only_triaged and not args.verify_triage:
        return "--only-triaged: only with --verify-triage"
    session = (args.in_place or args.cosmic_ray_config is not None
               or args.filter_session is not None or args.from_session is not None)
    if args.verify_triage and session:
        return ("--verify-triage runs the triaged mutants here: not with --in-place, "
                "--cosmic-ray-config, --filter-session or --from-session")
    return None


def _target(args: argparse.Namespace, settings: HarnessSettings) -> MeshTarget:
    if args.mutate:
        paths: tuple[Path, ...] | None = tuple(Path(p).absolute() for p in args.mutate)
        origin = "prove --mutate"
    else:
        paths = settings.mutate_paths
        origin = f"{settings.pyproject}: [tool.harness] mutate_paths"
    if paths is None:
        target = reference_target(reference_scan_config())
    elif len(settings.adapters) != 1:
        raise TargetError(f"{settings.adapter_origin}: --mutate drives one adapter, "
                          f"got {len(settings.adapters)}")
    else:
        target = from_paths(paths, settings.adapters[0], settings.scan,
                            checks=settings.invariants, params=settings.params, origin=origin)
    if not args.check:
        return target
    # The score of these invariants alone (a team's own, say): no scan, no conformance.
    chosen = invariant_ids("--check", [c for given in args.check for c in given.split(",")])
    return dataclasses.replace(target, checks=chosen, scan=False, conformance=False)


def _command(args: argparse.Namespace) -> str:
    """The test command each Cosmic Ray worker runs after mutating its checkout."""
    paths = " ".join(shlex.quote(p) for p in args.mutate or ())
    checks = "".join(f" --check {shlex.quote(check)}" for check in args.check)
    return (f"python -m harness prove --mutate {paths} --in-place --profile "
            f"{shlex.quote(args.profile)}{checks}").replace("  ", " ")


def _across_machines(
    args: argparse.Namespace, settings: HarnessSettings, target: MeshTarget, triage: Triage
) -> int | None:
    """The Cosmic Ray session steps; None when this is a local run."""
    if args.in_place:
        baseline = Baseline(frozenset(), target.checks)  # the mesh must be scan-clean
        try:
            verdict = judge(target, baseline, "in-place", target.sources, profile=args.profile)
        except KeyboardInterrupt as exc:  # and SIGTERM: Cosmic Ray must not count it a kill
            print(interrupted_line(interrupts.name_of(exc)), flush=True)
            raise
        print(verdict_line(verdict))
        return 0 if verdict.status == "survived" else 1
    if args.cosmic_ray_config is not None:
        measured = measure(target, args.profile, guided=False)
        if measured.findings:
            raise TargetError(f"{target.package}: the unmutated mesh has "
                              f"{len(measured.findings)} scan finding(s); a Cosmic Ray worker "
                              "judges a scan-clean mesh (fix or suppress them first)")
        args.cosmic_ray_config.write_text(config_text(
            target, triage, settings.root, command=_command(args), timeout=args.timeout,
            worker_urls=args.worker_url,
        ), encoding="utf-8")
        print(f"wrote {args.cosmic_ray_config}")
        return 0
    if args.filter_session is not None:
        marked = filter_session(args.filter_session, target, triage, settings.root)
        print(f"{args.filter_session}: {marked} mutant(s) marked skipped")
        return 0
    if args.from_session is not None:
        return _report(read_session(args.from_session, target, triage, settings.root,
                                    args.profile), args)
    return None


def run(args: argparse.Namespace, settings: HarnessSettings) -> int:
    problem = _usage(args)
    if problem is not None:
        raise UserError(problem)
    # A bad target, triage file or missing engine (UserErrors): exit 2 in harness.cli.
    target = _target(args, settings)
    triage = load(args.triage or settings.root / FILENAME)
    if args.triage is not None and not args.triage.exists():
        raise TriageError(f"{args.triage}: triage file not found")
    special = _across_machines(args, settings, target, triage)
    if special is not None:
        return special
    scored = run_score(
        target, triage,
        Options(profile=args.profile, sample=args.sample, seed=args.seed,
                jobs=worker_count(args.jobs),
                timeout=args.timeout, verify_triage=args.verify_triage,
                only_triaged=args.only_triaged, guided=args.guided),
        cache=None if args.no_cache else VerdictCache(settings.cache_dir / "mutants"),
        progress=lambda line: print(line, file=sys.stderr, flush=True),
    )
    return _report(scored, args)


def _report(scored: ScoreRun, args: argparse.Namespace) -> int:
    if args.format == "json":
        print(json.dumps(report.to_json(scored), indent=2))
    else:
        print(report.to_text(scored), end="")
    failed = _triage_failed(scored) if args.verify_triage else False
    value = report.score(scored)
    if args.fail_under is not None and (value is None or value < args.fail_under):
        print(f"mesh-harness prove: score {value if value is not None else 'n/a'} is under "
              f"--fail-under {args.fail_under:g}", file=sys.stderr)
        return 1
    return 1 if failed else 0


def _triage_failed(scored: ScoreRun) -> bool:
    """--verify-triage: one line per stale entry on standard error; True when any."""
    stale = scored.stale_entries()
    for entry in stale:
        print(f"mesh-harness prove: --verify-triage: {report.stale_line(scored, entry)}",
              file=sys.stderr)
    return bool(stale)
