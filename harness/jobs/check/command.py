"""`python -m harness check`: the main job, every check against one mesh, as one report.

In a repository with `[tool.harness]` it judges that repository (its scan paths, adapters,
invariants, profile and params); elsewhere the bundled reference mesh. It scans, checks
each adapter's conformance, runs every dynamic invariant, and runs the kill matrix where
the reference's mutants apply; then prints one report. Progress goes to standard error,
the report to standard output. Exit 0 when everything passed (not applicable is not a
failure), 1 when a check failed, 2 on a usage or configuration error.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import Any

from harness.jobs import Command, add_adapter_option
from harness.jobs.check.report import render, to_json
from harness.jobs.check.run import run_check
from harness.jobs.check.subject import subject_for
from harness.params import add_param_option, parse_assignments
from harness.settings import (
    Overrides,
    for_command,
    importing_from,
    invariant_ids,
    known_profile,
)
from harness.shared_database import add_shared_database_option, option_database, reachable
from harness.workers import add_jobs_option, jobs_problem, worker_count
from invariants.dynamic.profiles import PROFILES
from invariants.mutants.base import MutantNotApplicable
from invariants.user_errors import UserError

PROG = "mesh-harness check"


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "check",
        help="the main job: scan, conformance, invariants and kill matrix on one mesh",
        description="Judge the repository's mesh (its [tool.harness]), or the bundled "
        "reference mesh where there is none: scan it, check its adapter's conformance, run "
        "every dynamic invariant and, for the reference, the kill matrix of its pre-fix "
        "mutants; print one report. Exit 0 all passed, 1 a check failed, 2 usage error.",
    )
    parser.add_argument("--profile", default=None,
                        help=f"Hypothesis profile ({', '.join(sorted(PROFILES))}; default: "
                        "[tool.harness] profile, else ci)")
    parser.add_argument("--no-prove", action="store_true",
                        help="skip the kill matrix (the mutants)")
    parser.add_argument("--invariants", metavar="IDS", default=None,
                        help="comma-separated invariants to run (default: the configured "
                        "ones; with the kill matrix, only with --no-prove)")
    parser.add_argument("--search-only", action="store_true",
                        help="leave the seed scenarios out of the dynamic runs: what the "
                        "state machines' drawn rules find alone")
    add_adapter_option(parser, "the mesh to judge (a planted bug's factory, say)")
    add_param_option(parser)
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="the report as text (default) or JSON")
    add_jobs_option(parser, "the dynamic runs: the kill matrix's cells, or each adapter's "
                    "invariants (the report's seconds aside)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    add_shared_database_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    overrides = Overrides(adapters=(args.adapter,) if args.adapter else None,
                          adapter_origin="--adapter",
                          params=parse_assignments(args.param, "--param"),
                          params_origin="--param",
                          shared_database=option_database(args.shared_database,
                                                          "--shared-database"))
    problem = jobs_problem(args.jobs)
    if problem:
        raise UserError(problem)
    settings = for_command(overrides=overrides)
    importing_from(settings)
    if args.profile is not None:
        known_profile(args.profile, "--profile")
    subject = subject_for(settings, args.profile)
    if args.search_only:
        subject = dataclasses.replace(subject, seed_scenarios=False)
    known_profile(subject.profile, "--profile" if args.profile else "[tool.harness] profile")
    invariants = None
    if args.invariants is not None:
        invariants = invariant_ids("--invariants", args.invariants.split(","))
        if subject.kill_matrix and not args.no_prove:
            raise UserError("--invariants needs --no-prove (the kill matrix runs all)")
    shared = reachable(settings.shared_database)  # the option, else the key or the variable

    def progress(line: str) -> None:
        if not args.quiet:
            print(line, file=sys.stderr, flush=True)

    try:
        result = run_check(kill_matrix=not args.no_prove, invariants=invariants,
                           progress=progress, shared_database=shared, subject=subject,
                           jobs=worker_count(args.jobs))
    except MutantNotApplicable as exc:  # the reference changed under a mutant: a failed check
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 1
    sys.stdout.write(to_json(result) if args.format == "json" else render(result))
    return 0 if result.ok else 1


COMMAND = Command("check", add_parser)
