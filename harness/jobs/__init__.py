"""The jobs `python -m harness` runs: `check`, `scan`, `prove`, `fuzz`, `adapter-check`, one
package each.

Each job's `command` module defines its record, `COMMAND = Command(name, add_parser)`:
`add_parser(subparsers)` registers the parser and sets `func` (args -> exit code).
`harness.cli.COMMAND_MODULES` lists the modules; a new command is its job package plus
that one line. Jobs share the settings (`harness.settings`) and the libraries below them,
never each other's modules (an import-linter contract).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Command:
    """A job's record: its name on the command line (its package's name, `_` read as
    `-`) and the function registering its parser."""

    name: str
    add_parser: Callable[[Any], None]


def add_adapter_option(parser: Any, what: str = "the adapter") -> None:
    """The jobs' `--adapter MODULE:FACTORY` option: one adapter factory in place of the
    repository's."""
    parser.add_argument("--adapter", metavar="MODULE:FACTORY",
                        help=f"{what} (default: [tool.harness] adapter, else the reference "
                        "mesh's)")
