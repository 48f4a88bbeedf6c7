"""`python -m harness prove`: the kill matrix of the reference mesh and its pre-fix mutants.

Runs the reference and every mutant (or those named with --mutant) against every static
rule and dynamic invariant (`--jobs K`: the dynamic cells in K worker processes, the same
matrix), prints the matrix, and exits 1 when a kill a mutant lists is
missing, the reference fails anything, or a run reported an error; 2 on a usage error.
With `--mutate` it measures the mutation score instead (`harness.jobs.prove.mutate`).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from harness.jobs import Command
from harness.jobs.prove import mutate
from harness.run_state import hypothesis_profile
from harness.settings import Overrides, for_command, known_profile
from harness.shared_database import add_shared_database_option, option_database, reachable
from harness.workers import add_jobs_option, jobs_problem, worker_count
from invariants.mutants.base import MutantNotApplicable
from invariants.mutants.matrix import ALL_CHECKS, Matrix, prove
from invariants.mutants.registry import id_range
from invariants.mutants.render import matrix_text
from invariants.user_errors import UserError


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "prove",
        help="kill matrix: the reference and its pre-fix mutants against every check",
        description=f"Run the reference mesh and its pre-fix mutants ({id_range()}) against "
        "every static rule and dynamic invariant. Exit 0 when every listed kill happened and the "
        "reference passed everything, 1 otherwise, 2 on a usage error.",
    )
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--profile", default="ci", help="Hypothesis profile (ci, dev, fuzz)")
    parser.add_argument("--mutant", action="append", metavar="NAME", default=[],
                        help="only this mutant (id or slug, e.g. M2 or resend-timeouts); "
                        "repeatable")
    parser.add_argument("--check", action="append", metavar="ID", default=[],
                        help=f"only this check ({', '.join(ALL_CHECKS)}); repeatable; with "
                        "--mutate, the score of these invariants alone (a team's own too), "
                        "without the scan and adapter-check")
    parser.add_argument("--expected-only", action="store_true",
                        help="run each mutant only against the checks that must kill it")
    parser.add_argument("--search-only", action="store_true",
                        help="leave the seed scenarios out of the dynamic runs: what the "
                        "state machines' drawn rules find alone")
    parser.add_argument("--every-cell", action="store_true",
                        help="run every cell, also those the reference's runs show cannot "
                        "tell a mutant from it (they never reach its change)")
    add_jobs_option(parser, "the matrix's dynamic cells (a mutant's listed kills first), or "
                    "the mutants of --mutate")
    add_shared_database_option(parser)
    mutate.add_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # The working tree's [tool.harness]: a bad key fails as everywhere.
    settings = for_command(overrides=Overrides(
        shared_database=option_database(args.shared_database, "--shared-database")))
    known_profile(args.profile, "--profile")
    if args.mutate is not None:
        return mutate.run(args, settings)
    problem = jobs_problem(args.jobs)
    if problem is not None:
        raise UserError(problem)
    checks = [check.upper() for check in args.check]
    shared = reachable(settings.shared_database)  # the option, else the key or the variable
    try:
        matrix = prove(
            args.profile,
            args.mutant or None,
            checks=checks or None,
            expected_only=args.expected_only,
            seed_scenarios=not args.search_only,
            jobs=worker_count(args.jobs),
            progress=lambda line: print(line, file=sys.stderr, flush=True),
            settings=hypothesis_profile(args.profile, shared),
            guided=not args.every_cell,
        )
    except MutantNotApplicable as exc:
        print(f"mesh-harness prove: {exc}", file=sys.stderr)
        return 1
    _print(matrix, args.format)
    for error in matrix.errors:
        print(f"error: {error}", file=sys.stderr)
    return 0 if matrix.ok else 1


def _print(matrix: Matrix, fmt: str) -> None:
    if fmt == "json":
        print(json.dumps(matrix.to_json(), indent=2, sort_keys=False))
    else:
        print(matrix_text(matrix), end="")


COMMAND = Command("prove", add_parser)
