"""Hypothesis settings profiles for the dynamic invariants, selected by name.

- `ci`: deterministic (derandomized, no example database) and bounded, so the whole
  dynamic suite takes a few minutes at most on 2 cores and every run finds the same thing.
- `dev`: a local run: random, more examples, remembers failures in the local database.
- `fuzz`: long sessions that explore deep schedules; pair it with a shared database.

The profiles are values: nothing here reads the environment or changes them. A run's
shared database (the one fuzzing sessions write to, named by an option, a key or
`HARNESS_SHARED_DATABASE`, resolved once in `harness.settings`) is laid over a profile by
`with_shared_database`, and the settings object it returns is what the run is given.
"""

from __future__ import annotations

from collections.abc import Mapping
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

# The profiles, replaying no shared database.
PROFILES: Mapping[str, settings] = {
    CI: settings(
        _COMMON,
        max_examples=60,
        stateful_step_count=16,
        derandomize=True,
        database=None,
        # No explain phase: it replays hundreds of variants of a shrunk example, which costs
        # more than finding it. No target phase: from the 30th example on it would spend the
        # rest of 60 climbing the run's targets (queue depth, legs in flight), and races
        # are found in fewer examples without it (docs/performance.md). `dev` and `fuzz`
        # keep both.
        phases=(Phase.explicit, Phase.generate, Phase.shrink),
    ),
    DEV: settings(_COMMON, max_examples=300, stateful_step_count=30),
    FUZZ: settings(_COMMON, max_examples=20_000, stateful_step_count=60),
}

LOCAL_DATABASE = Path(".hypothesis") / "examples"


def with_shared_database(base: settings, shared_spec: str, origin: str) -> settings:
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


# Registered by name too, for `settings.load_profile` and `@settings(...)` users.
for _name, _profile in PROFILES.items():
    settings.register_profile(_name, _profile)


def profile(name: str) -> settings:
    """The settings of a named profile; a clear error for an unknown name."""
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
