"""`python -m harness fuzz`: a time-boxed HypoFuzz session over the invariant state machines.

Runs each selected invariant's state machine as a HypoFuzz fuzz target in K worker
processes for at most N minutes, sharing one Hypothesis example database (a directory,
or a Redis URL for workers on many machines), then prints what was run, which behaviours
were reached and every saved failure with its shrunk step program and diagram.

Exit codes: 0 nothing found and every selected test ran; 1 a failure was found (saved in
the database, so the `ci` profile replays it); 2 usage or configuration error, or HypoFuzz
could not run; 3 nothing found, but a selected test got no example (or fewer than
`--min-examples`): the summary says which and why.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.jobs import Command, add_adapter_option
from harness.params import add_param_option
from invariants.mutants.registry import id_range
from invariants.user_errors import UserError

if TYPE_CHECKING:
    from harness.settings import HarnessSettings

def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text!r}")
    return value


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "fuzz",
        help="time-boxed HypoFuzz session over the invariant state machines",
        description="Fuzz the invariant state machines with HypoFuzz workers sharing a "
        "Hypothesis example database. Exit 0 nothing found, 1 failure found, 2 usage, "
        "configuration or HypoFuzz error, 3 a selected test got no example (or fewer "
        "than --min-examples).",
    )
    parser.add_argument("--minutes", type=_positive_float, default=10.0, metavar="N",
                        help="time box in minutes, fractions allowed (default 10)")
    parser.add_argument("--workers", type=_positive_int, default=2, metavar="K",
                        help="HypoFuzz worker processes (default 2)")
    parser.add_argument("--database", metavar="SPEC",
                        help="a directory or redis://host:port/db "
                        "(default: .hypothesis/examples)")
    add_adapter_option(parser, "the mesh under test")
    parser.add_argument("--mutant", metavar="NAME",
                        help="fuzz a pre-fix mutant of the reference mesh "
                        f"({id_range()}, by id or slug)")
    parser.add_argument("--invariant", action="extend", nargs="+", metavar="ID",
                        help="invariants to fuzz (default: all)")
    add_param_option(parser)
    parser.add_argument("--min-examples", type=_positive_int, default=1, metavar="N",
                        help="examples each selected test must get, else exit 3 "
                        "(default 1: every test must run)")
    parser.add_argument("--stop-on-failure", action="store_true",
                        help="end the session as soon as a new failure is saved "
                        "(the harness then shrinks it)")
    parser.add_argument("--json", metavar="FILE", help="also write the summary as JSON")
    parser.add_argument("--session-dir", metavar="DIR",
                        help="keep the HypoFuzz log and observations here "
                        "(default: a temporary directory, removed afterwards)")
    parser.set_defaults(func=run)


def _workers_environ(settings: HarnessSettings) -> dict[str, str]:
    """The environment of HypoFuzz's workers: this one, with the repository's pytest
    `pythonpath` and then its root first on PYTHONPATH, so they import the adapter and the
    team's own invariants as this process does."""
    env = dict(os.environ)
    roots = (settings.root,) if settings.team_invariants else ()
    paths = [*(str(p) for p in (*settings.import_paths, *roots)),
             *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    if paths:
        env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    return env


def run(args: argparse.Namespace) -> int:
    """The session; what the user gave that cannot be used (a setting, an option, the
    database SPEC, the adapter) is a `UserError`, one line and exit 2 in `harness.cli`."""
    from invariants.engine_internals import hypofuzz_installed

    if not hypofuzz_installed():
        raise UserError("HypoFuzz is not installed (pip install 'mesh-harness[fuzz]')")
    from harness.params import parse_assignments
    from harness.settings import Overrides, for_command, importing_from
    from invariants.adapter_calls import AdapterExited
    from invariants.dynamic.database import normalise_spec
    from invariants.dynamic.report import HIDDEN_PACKAGES, own_traceback
    from invariants.fuzzing.config import FuzzConfig, normalise_invariants
    from invariants.fuzzing.run import run_fuzz
    from invariants.fuzzing.session import SessionPlan
    from invariants.fuzzing.summary import render_text, report_json

    if args.adapter and args.mutant:
        raise UserError("--adapter and --mutant exclude each other")
    # Defaults from the working tree's [tool.harness], read as every entry point reads it.
    settings = for_command(overrides=Overrides(
        params=parse_assignments(args.param, "--param"), params_origin="--param"))
    importing_from(settings)  # the repository's pytest `pythonpath`, as `check` reads it
    if not args.adapter and len(settings.adapters) > 1:
        raise UserError(f"{settings.adapter_origin} names {len(settings.adapters)} adapters; "
                        "a session fuzzes one: choose it with --adapter")
    try:
        config = FuzzConfig(
            adapter=args.adapter or settings.adapters[0],
            mutant=args.mutant,
            invariants=normalise_invariants(args.invariant or settings.invariants),
            database=normalise_spec(args.database),
            adapter_origin="--adapter" if args.adapter else settings.adapter_origin,
            params=settings.params,
            team_invariants=settings.team_invariants,
        )
        plan = SessionPlan(
            config=config,
            workers=args.workers,
            seconds=args.minutes * 60.0,
            stop_on_failure=args.stop_on_failure,
            min_examples=args.min_examples,
        )
        keep = args.session_dir is not None
        session_dir = Path(args.session_dir or tempfile.mkdtemp(prefix="mesh-fuzz-"))
        try:
            report = run_fuzz(plan, session_dir.resolve(), _workers_environ(settings))
            text = render_text(report)  # before the session directory (and log) goes
        finally:
            if not keep:
                shutil.rmtree(session_dir, ignore_errors=True)
    except AdapterExited as exc:  # the session cannot start: the adapter's frames, one line
        print(own_traceback(exc, (*HIDDEN_PACKAGES, "harness")), end="", file=sys.stderr)
        raise UserError(str(exc)) from None
    print(text)
    if args.json:
        Path(args.json).write_text(json.dumps(report_json(report), indent=2) + "\n",
                                   encoding="utf-8")
    return report.exit_code


COMMAND = Command("fuzz", add_parser)
