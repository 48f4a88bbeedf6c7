"""Hypothesis settings profiles for the dynamic invariants, selected by name.

- `ci`: deterministic (derandomized, no example database) and bounded, so the whole
  dynamic suite takes a few minutes at most on 2 cores and every run finds the same thing.
- `dev`: a local run: random, more examples, remembers failures in the local database.
- `fuzz`: long sessions that explore deep schedules; pair it with a shared database.
"""

from __future__ import annotations

from hypothesis import HealthCheck, Phase, settings

CI = "ci"
DEV = "dev"
FUZZ = "fuzz"

# Floods make single steps large; the data-too-large and too-slow checks would reject the
# very runs that matter, and the profile bounds the work instead.
_SUPPRESSED = (HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much)

PROFILES: dict[str, settings] = {
    CI: settings(
        max_examples=60,
        stateful_step_count=16,
        derandomize=True,
        database=None,
        deadline=None,
        print_blob=True,
        suppress_health_check=_SUPPRESSED,
        # No explain phase: it replays hundreds of variants of a shrunk example, which costs
        # more than finding it; `dev` and `fuzz` keep it.
        phases=(Phase.explicit, Phase.generate, Phase.target, Phase.shrink),
        report_multiple_bugs=False,
    ),
    DEV: settings(
        max_examples=300,
        stateful_step_count=30,
        deadline=None,
        print_blob=True,
        suppress_health_check=_SUPPRESSED,
        report_multiple_bugs=False,
    ),
    FUZZ: settings(
        max_examples=20_000,
        stateful_step_count=60,
        deadline=None,
        print_blob=True,
        suppress_health_check=_SUPPRESSED,
        report_multiple_bugs=False,
    ),
}

for _name, _settings in PROFILES.items():
    settings.register_profile(_name, _settings)


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
