"""`python -m harness` / `mesh-harness`: one entry, a subcommand per job.

Each subcommand lives in its own module exposing `add_parser(subparsers)`, which
registers the parser and sets `func` (args -> exit code). Exit codes: 0 clean,
1 findings or failed checks, 2 usage or configuration error.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

COMMAND_MODULES: tuple[str, ...] = (
    "harness.scan_command",
    "harness.fuzz_command",
    "harness.prove_command",
    "harness.check_command",
)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every subcommand, or of `only` (a command name): importing a command
    module costs its imports, and `scan` should not pay for the fuzzing machinery."""
    parser = argparse.ArgumentParser(
        prog="mesh-harness",
        description="Architecture-invariant checks for message meshes.",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        if only is None or name == f"harness.{only}_command":
            importlib.import_module(name).add_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else list(argv)
    named = arguments[0] if arguments else None
    known = named is not None and f"harness.{named}_command" in COMMAND_MODULES
    parser = build_parser(named if known else None)
    args = parser.parse_args(arguments)
    try:
        code: int = args.func(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return code
