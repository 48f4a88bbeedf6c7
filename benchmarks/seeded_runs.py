"""Seeded searches, for the benchmarks that measure search power over seeds.

`found_in(check, factory, seed, max_examples)` runs the check's search once, seeded by
`seed` (Hypothesis' global seed; no database, no shrinking), and gives the examples to its
first failure, or None where it found none (`seeded_run`: the run's whole outcome);
`found_by_check` counts them as `check` finds a violation, every run judged by every
checker.
Search power is the median of these over seeds: a property of the search, not of one
seed.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import hypothesis.core
from hypothesis import Phase
from hypothesis import settings as Settings

from invariants.adapter import AdapterFactory
from invariants.checks import CHECKS, CheckParams
from invariants.dynamic.profiles import profile
from invariants.dynamic.runner import Outcome, run_invariant

if TYPE_CHECKING:
    from harness.settings import HarnessSettings


def seeded(max_examples: int) -> Settings:
    """The `ci` profile, random instead of derandomized, searching as `ci` searches (its
    phases) but not shrinking: the examples to a failure are the search's."""
    ci = profile("ci")
    return Settings(ci, derandomize=False, database=None, max_examples=max_examples,
                    phases=tuple(p for p in ci.phases if p is not Phase.shrink))


def seeded_run(check: str, factory: AdapterFactory, seed: int, max_examples: int,
               **run: Any) -> Outcome:
    """One seeded run's outcome (`run`: `run_invariant`'s other keywords)."""
    setattr(hypothesis.core, "global_force_seed", seed)  # noqa: B010 (Hypothesis' own global)
    try:
        return run_invariant(check, factory, seeded(max_examples), **run)
    finally:
        setattr(hypothesis.core, "global_force_seed", None)  # noqa: B010


def found_in(check: str, factory: AdapterFactory, seed: int, max_examples: int,
             **run: Any) -> int | None:
    """Examples to the first failure of one seeded run, or None."""
    outcome = seeded_run(check, factory, seed, max_examples, **run)
    return outcome.examples if outcome.verdict == "violation" else None


def found_by_check(check: str, factory: AdapterFactory, seed: int, max_examples: int,
                   **run: Any) -> int | None:
    """Examples to `check`'s first violation as `check` the job finds it: every invariant
    the adapter admits run once (each seeded, at most `max_examples`), every run judged by
    every checker, so `check` may be seen violated in its own run or in another's. The
    runs are independent (`check --jobs` runs them side by side): the fewest examples any
    one of them took to see it, or None where none did."""
    seen_at = []
    for each in CHECKS:
        outcome = seeded_run(each, factory, seed, max_examples, **run)
        if each == check and outcome.verdict == "violation":
            seen_at.append(outcome.examples)
        seen = outcome.bystanders.get(check)
        if seen is not None and seen.example is not None:
            seen_at.append(seen.example)
    return min(seen_at, default=None)


def repo_settings(repo: Path) -> HarnessSettings:
    """The harness settings a repository states (its pyproject's `[tool.harness]`), read
    as `check` reads them: a bad key is `check`'s one line, and the script exits on it."""
    from harness.settings import for_command
    from invariants.scan.config import ConfigError

    try:
        return for_command(pyproject=repo / "pyproject.toml")
    except ConfigError as exc:
        raise SystemExit(str(exc)) from None


def repo_params(repo: Path) -> CheckParams:
    """The checkers' parameters a repository states (its `[tool.harness.params]`)."""
    return repo_settings(repo).params


def factory_named(spec: str) -> AdapterFactory:
    """The adapter factory `module:attribute` names (the module on `sys.path`)."""
    module, _, attribute = spec.partition(":")
    made: AdapterFactory = getattr(importlib.import_module(module), attribute)
    return made
