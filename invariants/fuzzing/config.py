"""What a fuzzing session fuzzes, and how it reaches the worker processes.

HypoFuzz collects the fuzz targets with pytest in every worker process, so the selection
travels as environment variables (`to_environ` / `from_environ`), read by `targets` at
import time.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from invariants.adapter import AdapterFactory
from invariants.adapter_spec import REFERENCE_ADAPTER, AdapterSpecError, load_factory, split_spec
from invariants.checks import (
    CHECK_IDS,
    CHECKS,
    DEFAULT_PARAMS,
    CheckParams,
    UnknownCheck,
    changed_figures,
    check_ids,
    team,
    with_figures,
)
from invariants.user_errors import UserError

DEFAULT_ADAPTER = REFERENCE_ADAPTER

ENV_ADAPTER = "HARNESS_FUZZ_ADAPTER"
ENV_MUTANT = "HARNESS_FUZZ_MUTANT"
ENV_INVARIANTS = "HARNESS_FUZZ_INVARIANTS"
ENV_DATABASE = "HARNESS_FUZZ_DATABASE"
ENV_PARAMS = "HARNESS_FUZZ_PARAMS"  # the figures that are not the seeds', as JSON
ENV_TEAM_INVARIANTS = "HARNESS_FUZZ_TEAM_INVARIANTS"  # the team's checkers, `module:attribute`


class FuzzConfigError(UserError, ValueError):
    """A selection that cannot be fuzzed; the message names the offending value."""


@dataclass(frozen=True)
class FuzzConfig:
    adapter: str = DEFAULT_ADAPTER  # module:factory, ignored when `mutant` is set
    mutant: str | None = None  # a pre-fix mutant of the reference mesh, by id or slug
    invariants: tuple[str, ...] = CHECK_IDS
    database: str | None = None  # a database SPEC; None: the default directory
    # The figures the checkers hold the mesh to ([tool.harness.params], --param).
    params: CheckParams = field(default=DEFAULT_PARAMS, hash=False)
    # Where `adapter` came from, for error lines (`--adapter`, `[tool.harness] adapter`);
    # the session's own: the workers are given a spec the session has loaded already.
    adapter_origin: str = field(default="--adapter", compare=False)
    # The team's own invariants (`[tool.harness] invariants`), loaded again in each worker
    # (from its PYTHONPATH, the repository's) before the selection is read.
    team_invariants: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for spec in self.team_invariants:
            try:
                team.load(spec)
            except team.TeamInvariantError as exc:
                raise FuzzConfigError(f"{ENV_TEAM_INVARIANTS}: {exc}") from None
        if not self.invariants:
            raise FuzzConfigError("no invariant selected")
        normalise_invariants(self.invariants)
        try:
            split_spec(self.adapter, self.adapter_origin)
        except AdapterSpecError as exc:
            raise FuzzConfigError(str(exc)) from None

    @property
    def subject(self) -> str:
        return f"mutant {self.mutant}" if self.mutant else f"adapter {self.adapter}"

    def to_environ(self) -> dict[str, str]:
        env = {ENV_ADAPTER: self.adapter, ENV_INVARIANTS: ",".join(self.invariants)}
        if self.mutant:
            env[ENV_MUTANT] = self.mutant
        if self.database:
            env[ENV_DATABASE] = self.database
        if self.team_invariants:
            env[ENV_TEAM_INVARIANTS] = ",".join(self.team_invariants)
        changes = changed_figures(self.params)
        if changes:
            env[ENV_PARAMS] = json.dumps(changes, sort_keys=True)
        return env

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> FuzzConfig:
        invariants = [c.strip() for c in environ.get(ENV_INVARIANTS, "").split(",") if c.strip()]
        return cls(
            adapter=environ.get(ENV_ADAPTER) or DEFAULT_ADAPTER,
            mutant=environ.get(ENV_MUTANT) or None,
            invariants=tuple(invariants) if invariants else CHECK_IDS,
            database=environ.get(ENV_DATABASE) or None,
            params=_params_from_environ(environ.get(ENV_PARAMS)),
            team_invariants=tuple(
                spec.strip() for spec in environ.get(ENV_TEAM_INVARIANTS, "").split(",")
                if spec.strip()),
        )


def _params_from_environ(text: str | None) -> CheckParams:
    if not text:
        return DEFAULT_PARAMS
    try:
        changes = json.loads(text)
        if not isinstance(changes, dict):
            raise TypeError(f"expected a JSON object, got {changes!r}")
        return with_figures(changes)
    except (ValueError, TypeError) as exc:
        raise FuzzConfigError(f"{ENV_PARAMS}: {exc}") from None


def normalise_invariants(
    names: Sequence[str] | None, origin: str = "--invariant"
) -> tuple[str, ...]:
    """`inv4`, `INV4` -> `INV4`, in the checkers' order (a team's registered ones after
    the built-in ones), without repeats."""
    if not names:
        return CHECK_IDS
    try:
        wanted = set(check_ids(names, origin))
    except UnknownCheck as exc:
        raise FuzzConfigError(str(exc)) from None
    return tuple(c for c in CHECKS if c in wanted)


def mutant_factory(name: str) -> AdapterFactory:
    from invariants.mutants.base import MutantNotApplicable
    from invariants.mutants.build import build_mutant
    from invariants.mutants.registry import find_mutant

    try:
        return build_mutant(find_mutant(name)).factory
    except (ValueError, MutantNotApplicable) as exc:
        raise FuzzConfigError(str(exc)) from None


def resolve_factory(config: FuzzConfig) -> AdapterFactory:
    if config.mutant:
        return mutant_factory(config.mutant)
    try:
        return load_factory(config.adapter, config.adapter_origin)
    except AdapterSpecError as exc:
        raise FuzzConfigError(str(exc)) from None
