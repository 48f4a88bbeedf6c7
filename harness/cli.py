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

from invariants.scan.config import ConfigError

COMMAND_MODULES: tuple[str, ...] = (
    "harness.jobs.scan.command",
    "harness.jobs.fuzz.command",
    "harness.jobs.prove.command",
    "harness.jobs.check.command",
    "harness.jobs.adapter_check.command",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mesh-harness",
        description="Architecture-invariant checks for message meshes.",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).add_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
    except ConfigError as exc:  # a bad setting, from any job: the same one line everywhere
        print(f"{parser.prog} {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return code
