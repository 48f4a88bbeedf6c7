"""Settings profiles are registered by name; an unknown name is a clear error."""

import os
import subprocess
import sys

import pytest
from hypothesis import settings

from invariants.dynamic.profiles import PROFILES, load_profile, profile


def test_ci_is_deterministic_and_bounded() -> None:
    ci = profile("ci")
    assert ci.derandomize is True
    assert ci.database is None
    assert ci.deadline is None
    assert ci.max_examples <= 100
    assert ci.stateful_step_count <= 20


def test_fuzz_runs_longer_than_dev_and_dev_longer_than_ci() -> None:
    assert profile("ci").max_examples < profile("dev").max_examples < profile("fuzz").max_examples


def test_every_profile_is_registered_with_hypothesis() -> None:
    previous = settings.get_current_profile_name()
    try:
        for name in PROFILES:
            assert load_profile(name).max_examples == settings.default.max_examples
    finally:
        settings.load_profile(previous)


def test_unknown_profile_names_the_known_ones() -> None:
    expected = r"unknown Hypothesis profile 'nightly' \(known: ci, dev, fuzz\)"
    with pytest.raises(ValueError, match=expected):
        profile("nightly")


@pytest.mark.parametrize("ci_variable", [None, "true"])
def test_dev_and_fuzz_stay_random_with_a_database_where_a_ci_variable_is_set(
    ci_variable: str | None,
) -> None:
    # Where `CI` is set Hypothesis loads its own `ci` profile at import (derandomized, no
    # database); `dev` and `fuzz` must not inherit it, or HypoFuzz skips every target.
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci_variable is not None:
        env["CI"] = ci_variable
    probe = (
        "from invariants.dynamic.profiles import profile\n"
        "for name in ('dev', 'fuzz'):\n"
        "    s = profile(name)\n"
        "    print(name, s.derandomize, s.database is None)\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    )
    assert completed.stdout.split("\n")[:2] == ["dev False False", "fuzz False False"]
