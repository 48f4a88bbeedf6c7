"""Hypothesis' private names the harness uses, each named once.

- `FeatureFlags`, `FeatureStrategy` (`hypothesis.strategies._internal.featureflags`) and
  `ConjectureData`: the rule swarm of a state machine (`invariants.dynamic.rule_swarm`).
- `rules_strategy`, `rule_names`, `set_enabled_rules_strategy`, `at_least_one_of`: the
  state machine's `_rules_strategy` and the attributes of it the swarm replaces.
- `function_digest`, `add_to_digest`, `set_use_seed`: a machine's example-database key
  and seed (`invariants.dynamic.mesh_keys`); the two hooks are attributes Hypothesis reads
  with `getattr(..., None)`, so only the shape tests can tell they are still read.
- `pytest_skip_exceptions`, `choices_so_far`, `join_background_writes`: what the fuzzing
  sessions read of a run in progress.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, cast

from hypothesis.database import BackgroundWriteDatabase
from hypothesis.stateful import RuleBasedStateMachine
from hypothesis.strategies import SearchStrategy

from invariants.engine_internals import HYPOTHESIS_PIN, moved, private_attribute, private_imports

with private_imports("hypothesis", HYPOTHESIS_PIN):
    from hypothesis.control import current_build_context
    from hypothesis.core import skip_exceptions_to_reraise
    from hypothesis.internal.conjecture.data import ConjectureData
    from hypothesis.internal.reflection import function_digest
    from hypothesis.strategies._internal.featureflags import FeatureFlags, FeatureStrategy

__all__ = [
    "ConjectureData",
    "FeatureFlags",
    "FeatureStrategy",
    "add_to_digest",
    "at_least_one_of",
    "choices_so_far",
    "function_digest",
    "join_background_writes",
    "pytest_skip_exceptions",
    "rule_names",
    "rules_strategy",
    "set_enabled_rules_strategy",
    "set_use_seed",
]

# Read by `function_digest`: bytes added to the digest of a function or class.
DIGEST_ATTRIBUTE = "_hypothesis_internal_add_digest"
# Copied by `get_state_machine_test` onto the test: the seed of its random generation.
SEED_ATTRIBUTE = "_hypothesis_internal_use_seed"
# The attribute of a machine's rules strategy that holds the run's feature flags.
ENABLED_RULES = "enabled_rules_strategy"

# Checked once at import: the private methods the harness calls.
private_attribute(BackgroundWriteDatabase, "_join", HYPOTHESIS_PIN)
private_attribute(FeatureStrategy, "do_draw", HYPOTHESIS_PIN)


def rules_strategy(machine: RuleBasedStateMachine) -> Any:
    """Hypothesis' RuleStrategy for this run of `machine` (set by its `__init__`)."""
    strategy = private_attribute(machine, "_rules_strategy", HYPOTHESIS_PIN)
    if not hasattr(strategy, ENABLED_RULES):
        # Setting it would silently do nothing: fail where the cause is plain.
        raise moved(f"RuleStrategy.{ENABLED_RULES}", HYPOTHESIS_PIN,
                    "this Hypothesis keeps a state machine's rule swarm elsewhere; "
                    "invariants.dynamic.rule_swarm needs updating")
    return strategy


def rule_names(strategy: Any) -> frozenset[str]:
    """The names of the rules a RuleStrategy chooses from."""
    return frozenset(rule.function.__name__ for rule in strategy.rules)


def set_enabled_rules_strategy(strategy: Any, flags: SearchStrategy[FeatureFlags]) -> None:
    """Make `flags` the strategy a RuleStrategy draws the run's feature flags from."""
    setattr(strategy, ENABLED_RULES, flags)


def at_least_one_of(strategy: FeatureStrategy) -> frozenset[Hashable]:
    """The features a FeatureStrategy keeps at least one of enabled."""
    return strategy._at_least_one_of


def add_to_digest(owner: object, extra: bytes) -> None:
    """Make `function_digest(owner)` digest `extra` too."""
    setattr(owner, DIGEST_ATTRIBUTE, extra)


def set_use_seed(owner: object, seed: int | None) -> None:
    """Seed the random generation of the test Hypothesis makes of `owner` (None: none)."""
    setattr(owner, SEED_ATTRIBUTE, seed)


def pytest_skip_exceptions() -> tuple[type[BaseException], ...]:
    """pytest's skip exceptions, which Hypothesis re-raises (untyped there)."""
    return cast(Callable[[], tuple[type[BaseException], ...]], skip_exceptions_to_reraise)()


def choices_so_far() -> int:
    """The choices the test case being run has made so far, forced ones included."""
    return len(current_build_context().data.nodes)


def join_background_writes(queue: BackgroundWriteDatabase, timeout: float) -> None:
    """Wait (at most `timeout` seconds) until `queue`'s pending writes are written out."""
    queue._join(timeout)
