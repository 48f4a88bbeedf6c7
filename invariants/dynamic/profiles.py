"""Hypothesis settings profiles for the dynamic invariants, selected by name.

- `ci`: deterministic (derandomized, no example database) and bounded, so the whole
  dynamic suite takes a few minutes at most on 2 cores and every run finds the same thing.
- `dev`: a local run: random, more examples, remembers failures in the local database.
- `fuzz`: long sessions that explore deep schedules; pair it with a shared database.

With `HARNESS_SHARED_DATABASE` set (a directory or a `redis://` URL, the database fuzzing
sessions write to), every profile reads that database read-only beside its local one and
replays what it holds first, so CI fails on every failure a session saved until it is
fixed (`with_shared_database`). The plugin's `--harness-shared-database` and
`python -m harness check --shared-database` name one for a run instead (`replaying`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from hypothesis import HealthCheck, Phase, settings
from hypothesis.database import (
    DirectoryBasedExampleDatabase,
    MultiplexedDatabase,
    ReadOnlyDatabase,
)

CI = "ci"
DEV = "dev"
FUZZ = "fuzz"

# Floods make single steps large; the data-too-large and too-slow checks would reject the
# very runs that matter, and the profile bounds the work instead.
_SUPPRESSED = (HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much)

# What every profile shares: no deadline (virtual time makes wall-clock deadlines
# meaningless), the reproduce blob printed, one bug reported at a time. The parent is
# Hypothesis' own `default` profile, not whatever profile is loaded at import: where a CI
# variable is set Hypothesis loads its `ci` profile (derandomized, no database), and `dev`
# and `fuzz` must not inherit that (HypoFuzz skips a derandomized test).
_COMMON = settings(
    settings.get_profile("default"),
    deadline=None,
    print_blob=True,
    suppress_health_check=_SUPPRESSED,
    report_multiple_bugs=False,
)

# The profiles as defined, replaying no shared database.
BASE_PROFILES: Mapping[str, settings] = {
    CI: settings(
        _COMMON,
        max_examples=60,
        stateful_step_count=16,
        derandomize=True,
        database=None,
        # No explain phase: it replays hundreds of variants of a shrunk example, which costs
        # more than finding it; `dev` and `fuzz` keep it.
        phases=(Phase.explicit, Phase.generate, Phase.target, Phase.shrink),
    ),
    DEV: settings(_COMMON, max_examples=300, stateful_step_count=30),
    FUZZ: settings(_COMMON, max_examples=20_000, stateful_step_count=60),
}

SHARED_DATABASE_ENV = "HARNESS_SHARED_DATABASE"
LOCAL_DATABASE = Path(".hypothesis") / "examples"


def with_shared_database(
    base: settings, shared_spec: str, origin: str = SHARED_DATABASE_ENV
) -> settings:
    """`base`, replaying first every example saved in the shared database (read-only, so
    CI never deletes a session's failure) beside a local one that records its own.

    `derandomize` is inherited, not passed, so `ci` stays derandomized: generation is still
    seeded by the test, the saved examples replayed before it (with a database Hypothesis
    also keeps a front of the best-scoring examples, so the programs generated may differ
    from a run without one).
    A saved program longer than `stateful_step_count` is replayed first at the `fuzz`
    profile's step count (`invariants.dynamic.mesh_keys.replay_first`).
    A SPEC that cannot be opened is a `ValueError` naming `origin` (where it was given).
    """
    from invariants.dynamic.database import DatabaseSpecError, open_database

    try:
        shared = open_database(shared_spec)
    except DatabaseSpecError as exc:
        raise ValueError(f"{origin}: {exc}") from None
    local = base.database
    if local is None:
        local = DirectoryBasedExampleDatabase(LOCAL_DATABASE)
    phases = tuple(dict.fromkeys((Phase.reuse, *base.phases)))
    return settings(
        base, database=MultiplexedDatabase(local, ReadOnlyDatabase(shared)), phases=phases
    )


def shared_spec_from(environ: Mapping[str, str]) -> str | None:
    """The shared database `HARNESS_SHARED_DATABASE` names, if any."""
    return environ.get(SHARED_DATABASE_ENV, "").strip() or None


def _profiles(shared_spec: str | None, origin: str) -> dict[str, settings]:
    if not shared_spec:
        return dict(BASE_PROFILES)
    return {name: with_shared_database(s, shared_spec, origin) for name, s in BASE_PROFILES.items()}


def _register(profiles: Mapping[str, settings]) -> None:
    for name, chosen in profiles.items():
        settings.register_profile(name, chosen)


def _from_environment() -> tuple[dict[str, settings], str | None]:
    """The profiles replaying the environment's shared database, or, when its SPEC cannot
    be opened, the plain profiles and the error that `profile()` raises (an option that
    names another database still works)."""
    try:
        return _profiles(shared_spec_from(os.environ), SHARED_DATABASE_ENV), None
    except ValueError as exc:
        return dict(BASE_PROFILES), str(exc)


# The profiles of this process: replaying the environment's shared database, if named.
PROFILES, _ENVIRONMENT_ERROR = _from_environment()
_register(PROFILES)
_replaying: list[str] = []  # origins of the `replaying` blocks entered, innermost last


@contextmanager
def replaying(shared_spec: str | None, origin: str) -> Iterator[None]:
    """Within: every named profile replays `shared_spec` (none when None, whatever the
    environment says); the profiles are restored after. For callers that pass a profile
    by name to code that looks it up (the kill matrix). Raises `ValueError` naming
    `origin` before changing anything when the SPEC cannot be opened."""
    chosen = _profiles(shared_spec, origin)
    previous = dict(PROFILES)
    PROFILES.update(chosen)
    _register(chosen)
    _replaying.append(origin)
    try:
        yield
    finally:
        _replaying.pop()
        PROFILES.update(previous)
        _register(previous)


def profile(name: str) -> settings:
    """The settings of a named profile; a clear error for an unknown name, or for a
    `HARNESS_SHARED_DATABASE` that cannot be opened."""
    if _ENVIRONMENT_ERROR is not None and not _replaying:
        raise ValueError(_ENVIRONMENT_ERROR)
    try:
        return PROFILES[name]
    except KeyError:
        known = ", ".join(sorted(PROFILES))
        raise ValueError(f"unknown Hypothesis profile {name!r} (known: {known})") from None


def load_profile(name: str) -> settings:
    """Make a named profile the default for every Hypothesis test in this process."""
    chosen = profile(name)
    settings.load_profile(name)
    return chosen
