"""`python -m harness check`: the main job, every check against the bundled reference mesh.

Scans the reference mesh, runs every dynamic invariant on it and runs the kill matrix,
then prints one report. Progress goes to standard error, the report to standard output.
Exit 0 when everything passed, 1 when a check failed, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from harness.jobs.check.report import render, run_check, to_json
from harness.settings import for_command, invariant_ids, known_profile
from harness.shared_database import add_shared_database_option, command_database
from invariants.checks import CHECK_IDS
from invariants.dynamic.profiles import PROFILES
from invariants.mutants.base import MutantNotApplicable
from invariants.scan.config import ConfigError

PROG = "mesh-harness check"


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "check",
        help="the main job: scan, invariants and kill matrix on the bundled reference mesh",
        description="Scan the bundled reference mesh, run every dynamic invariant on it and "
        "the kill matrix of its pre-fix mutants, and print one report. Exit 0 all passed, "
        "1 a check failed, 2 usage error.",
    )
    parser.add_argument("--profile", default="ci",
                        help=f"Hypothesis profile ({', '.join(sorted(PROFILES))}; default ci)")
    parser.add_argument("--no-prove", action="store_true",
                        help="skip the kill matrix (the mutants)")
    parser.add_argument("--invariants", metavar="IDS", default=None,
                        help="with --no-prove: comma-separated invariants to run (default all)")
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="the report as text (default) or JSON")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    add_shared_database_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    for_command()  # the working tree's [tool.harness]: a bad key fails as everywhere
    known_profile(args.profile, "--profile")

    invariants = CHECK_IDS
    if args.invariants is not None:
        try:
            invariants = invariant_ids("--invariants", args.invariants.split(","))
        except ConfigError as exc:
            print(f"{PROG}: error: {exc}", file=sys.stderr)
            return 2
        if not args.no_prove:
            print(f"{PROG}: error: --invariants needs --no-prove (the kill matrix runs all)",
                  file=sys.stderr)
            return 2

    try:
        shared = command_database(args.shared_database, "--shared-database", os.environ)
    except ConfigError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2

    def progress(line: str) -> None:
        if not args.quiet:
            print(line, file=sys.stderr, flush=True)

    try:
        result = run_check(args.profile, kill_matrix=not args.no_prove, invariants=invariants,
                           progress=progress, shared_database=shared)
    except MutantNotApplicable as exc:  # the reference changed under a mutant: a failed check
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 1
    except ValueError as exc:  # the reference repository's [tool.harness] is malformed
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(to_json(result) if args.format == "json" else render(result))
    return 0 if result.ok else 1
