"""`python -m harness` / `mesh-harness`: one entry, a subcommand per job.

Each subcommand lives in its job's `command` module, which defines its record `COMMAND`
(`harness.jobs.Command`: the name, and `add_parser(subparsers)`, which registers the
parser and sets `func`, args -> exit code); `COMMAND_MODULES` lists the modules, and a new
command is its job package plus its line there. Exit codes: 0 clean,
1 findings or failed checks, 2 usage or configuration error (a `UserError` from any
command, mapped here alone: `mesh-harness <cmd>: error: <message>`); for every command,
128 + the signal's number when a signal ended it (130 SIGINT, 143 SIGTERM, 129 SIGHUP),
with one line saying so, no verdict, and no child process left (`invariants.interrupts`).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from harness.jobs import Command
from invariants import interrupts, records
from invariants.user_errors import UserError

# One line per command module, in the order `--help` lists them; each defines `COMMAND`.
COMMAND_MODULES: tuple[str, ...] = (
    "harness.jobs.scan.command",
    "harness.jobs.fuzz.command",
    "harness.jobs.prove.command",
    "harness.jobs.check.command",
    "harness.jobs.adapter_check.command",
)


def command_name(module: str) -> str:
    """A command's name, read from its module's path without importing it (so `scan` does
    not pay for the other jobs' imports): the job package's name, `_` read as `-`."""
    return module.split(".")[-2].replace("_", "-")


# Command name -> the module that defines it, in `--help` order.
COMMANDS: dict[str, str] = {command_name(module): module for module in COMMAND_MODULES}


def command_of(module: str) -> Command:
    """The `COMMAND` record of `module`, named as its path says (a `TypeError` naming the
    module otherwise)."""
    record = records.load_one(module, "COMMAND", Command)
    if record.name != command_name(module):
        raise TypeError(f"{module}: COMMAND is named {record.name!r}, its path says "
                        f"{command_name(module)!r}")
    return record


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every subcommand, or of `only` (a command name): importing a command
    module costs its imports, and `scan` should not pay for the fuzzing machinery."""
    parser = argparse.ArgumentParser(
        prog="mesh-harness",
        description="Architecture-invariant checks for message meshes.",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command, module in COMMANDS.items():
        if only is None or command == only:
            command_of(module).add_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else list(argv)
    named = arguments[0] if arguments else None
    prog = f"mesh-harness {named}" if named in COMMANDS else "mesh-harness"
    before = frozenset(interrupts.descendants(os.getpid()))  # not the command's to stop
    with interrupts.handled():
        try:
            parser = build_parser(named if named in COMMANDS else None)
            args = parser.parse_args(arguments)
            code: int = args.func(args)
            interrupts.raise_received()  # a signal something swallowed is no less a signal
        except UserError as exc:  # what the user gave, from any job: the same one line everywhere
            print(f"{prog}: error: {exc}", file=sys.stderr)
            return 2
        except KeyboardInterrupt as exc:  # SIGINT, SIGTERM, SIGHUP: never a verdict
            return _interrupted(prog, exc, before)
    return code


def _interrupted(prog: str, exc: KeyboardInterrupt, before: frozenset[int]) -> int:
    """Stop what the command started, say so in one line, and exit as the signal does."""
    with interrupts.ignored():  # the command is ending: a second signal changes nothing
        interrupts.stop_children(spare=before)
        print(f"{prog}: interrupted ({interrupts.name_of(exc)}): no verdict",
              file=sys.stderr, flush=True)
    return interrupts.exit_code(exc)
