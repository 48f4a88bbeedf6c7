"""The shared example database a run replays, checked where it was given.

A SPEC is a directory (relative to where it was given: the invocation directory for an
option or the environment variable, the ini file's or the pyproject's directory for a key)
or a `redis://` URL. Every profile replays it read-only beside its local database
(`invariants.dynamic.profiles.with_shared_database`). Each problem is one `ConfigError` line
naming the option, key or variable it came from.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from invariants.scan.config import ConfigError

# The plugin loads in every pytest run: Hypothesis' databases are imported only when a
# shared database is named.

SHARED_DATABASE_ENV = "HARNESS_SHARED_DATABASE"


@dataclass(frozen=True)
class SharedDatabase:
    spec: str  # a URL, or an absolute directory
    origin: str  # the option, key or variable that named it, for error lines


def shared_database_spec(value: str, origin: str, base: Path) -> SharedDatabase:
    """The SPEC `value`, a directory made absolute against `base`; a `ConfigError` naming
    `origin` when it cannot be a database (its server is not contacted here)."""
    from invariants.dynamic.database import DatabaseSpecError, open_database

    text = value.strip()
    if not text:
        raise ConfigError(f"{origin}: expected a directory or a redis:// URL, got {value!r}")
    spec = text if "://" in text else str((base / Path(text).expanduser()).absolute())
    try:
        open_database(spec)
    except DatabaseSpecError as exc:
        raise ConfigError(f"{origin}: {exc}") from None
    return SharedDatabase(spec, origin)


def environment_database(environ: Mapping[str, str], base: Path) -> SharedDatabase | None:
    """The database `HARNESS_SHARED_DATABASE` names, a directory relative to `base`."""
    if not environ:  # nothing to read (the scan passes none): Hypothesis stays unimported
        return None
    value = environ.get(SHARED_DATABASE_ENV, "").strip()
    return shared_database_spec(value, SHARED_DATABASE_ENV, base) if value else None


def ensure_reachable(shared: SharedDatabase) -> None:
    """Fail before any test when a Redis server does not answer: otherwise every invariant
    item would fail on the connection instead."""
    from invariants.dynamic.database import DatabaseSpecError, check_reachable, open_database

    try:
        check_reachable(open_database(shared.spec), shared.spec)
    except DatabaseSpecError as exc:
        raise ConfigError(f"{shared.origin}: {exc}") from None


def add_shared_database_option(parser: argparse.ArgumentParser) -> None:
    """`--shared-database SPEC` for a command that runs invariants (`check`, `prove`)."""
    parser.add_argument("--shared-database", metavar="SPEC", default=None,
                        help="replay the examples fuzzing sessions saved in this database "
                        "(a directory or redis://host:port/db), each for its mesh, before each "
                        f"invariant (default: ${SHARED_DATABASE_ENV}, else none)")


def option_database(option: str | None, option_name: str) -> SharedDatabase | None:
    """For `python -m harness check`/`prove`: the database `--shared-database` names,
    relative to the working directory (None when not given). It goes into the settings'
    overrides, so the run replays the option's database, else `[tool.harness]
    shared_database`, else `HARNESS_SHARED_DATABASE`, as the plugin does."""
    return None if option is None else shared_database_spec(option, option_name, Path.cwd())


def reachable(shared: SharedDatabase | None) -> SharedDatabase | None:
    """`shared`, once its server (if it has one) has answered."""
    if shared is not None:
        ensure_reachable(shared)
    return shared
