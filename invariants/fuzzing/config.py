"""What a fuzzing session fuzzes, and how it reaches the worker processes.

HypoFuzz collects the fuzz targets with pytest in every worker process, so the selection
travels as environment variables (`to_environ` / `from_environ`), read by `targets` at
import time.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from invariants.adapter import AdapterFactory
from invariants.machines import PLANS

DEFAULT_ADAPTER = "reference_impl.adapter:make_adapter"

ENV_ADAPTER = "HARNESS_FUZZ_ADAPTER"
ENV_MUTANT = "HARNESS_FUZZ_MUTANT"
ENV_INVARIANTS = "HARNESS_FUZZ_INVARIANTS"
ENV_DATABASE = "HARNESS_FUZZ_DATABASE"


class FuzzConfigError(ValueError):
    """A selection that cannot be fuzzed; the message names the offending value."""


@dataclass(frozen=True)
class FuzzConfig:
    adapter: str = DEFAULT_ADAPTER  # module:factory, ignored when `mutant` is set
    mutant: str | None = None  # a pre-fix mutant of the reference mesh, by id or slug
    invariants: tuple[str, ...] = tuple(PLANS)
    database: str | None = None  # a database SPEC; None: the default directory

    def __post_init__(self) -> None:
        unknown = [c for c in self.invariants if c not in PLANS]
        if unknown or not self.invariants:
            known = ", ".join(PLANS)
            raise FuzzConfigError(f"unknown invariant(s) {unknown} (known: {known})")
        if ":" not in self.adapter:
            raise FuzzConfigError(f"adapter {self.adapter!r}: expected module:factory")

    @property
    def subject(self) -> str:
        return f"mutant {self.mutant}" if self.mutant else f"adapter {self.adapter}"

    def to_environ(self) -> dict[str, str]:
        env = {ENV_ADAPTER: self.adapter, ENV_INVARIANTS: ",".join(self.invariants)}
        if self.mutant:
            env[ENV_MUTANT] = self.mutant
        if self.database:
            env[ENV_DATABASE] = self.database
        return env

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> FuzzConfig:
        invariants = [c.strip() for c in environ.get(ENV_INVARIANTS, "").split(",") if c.strip()]
        return cls(
            adapter=environ.get(ENV_ADAPTER) or DEFAULT_ADAPTER,
            mutant=environ.get(ENV_MUTANT) or None,
            invariants=tuple(invariants) if invariants else tuple(PLANS),
            database=environ.get(ENV_DATABASE) or None,
        )


def normalise_invariants(names: Sequence[str] | None) -> tuple[str, ...]:
    """`inv4`, `INV4` -> `INV4`, in the machines' order, without repeats."""
    if not names:
        return tuple(PLANS)
    wanted = {name.strip().upper() for name in names}
    unknown = sorted(wanted - set(PLANS))
    if unknown:
        raise FuzzConfigError(f"unknown invariant(s) {unknown} (known: {', '.join(PLANS)})")
    return tuple(c for c in PLANS if c in wanted)


def load_factory(spec: str) -> AdapterFactory:
    """Import `module:factory`; a clear error naming the SPEC when it does not resolve."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise FuzzConfigError(f"adapter {spec!r}: expected module:factory")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise FuzzConfigError(f"adapter {spec!r}: cannot import {module_name} ({exc})") from None
    except Exception as exc:  # the module itself raised while importing: one line
        first = str(exc).splitlines()[0] if str(exc) else ""
        raise FuzzConfigError(
            f"adapter {spec!r}: importing {module_name} raised {type(exc).__name__}: {first}"
        ) from None
    factory = getattr(module, attribute, None)
    if not callable(factory):
        raise FuzzConfigError(f"adapter {spec!r}: {module_name} has no callable {attribute}")
    return cast(AdapterFactory, factory)


def mutant_factory(name: str) -> AdapterFactory:
    from invariants.mutants.base import MutantNotApplicable
    from invariants.mutants.build import build_mutant
    from invariants.mutants.registry import find_mutant

    try:
        return build_mutant(find_mutant(name)).factory
    except (ValueError, MutantNotApplicable) as exc:
        raise FuzzConfigError(str(exc)) from None


def resolve_factory(config: FuzzConfig) -> AdapterFactory:
    return mutant_factory(config.mutant) if config.mutant else load_factory(config.adapter)
