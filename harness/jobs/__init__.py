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
