"""Hypothesis's swarm over a machine's rules, with the plan's core families kept on.

Hypothesis switches each rule of a `RuleBasedStateMachine` off for a whole run with a
probability it draws per run (swarm testing, `FeatureFlags`), core rules included: about
half of a check's runs then never take the step its invariant is about (INV6 without a
fan-out or a storm), examples that cannot exercise the check. `keep_on` gives a machine
feature flags that start with the named rules enabled; every other rule is still
switched on or off as Hypothesis would, and the flags still shrink towards all on.

The flags are forced, not left out, so a run draws the same choices as before for every
rule: saved examples keep their shape.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine

from invariants.engine_internals.hypothesis_private import (
    ConjectureData,
    FeatureFlags,
    FeatureStrategy,
    at_least_one_of,
    rule_names,
    rules_strategy,
    set_enabled_rules_strategy,
)


class _SomeAlwaysOn(FeatureStrategy):
    def __init__(self, on: Iterable[Hashable], at_least_one_of: Iterable[Hashable]) -> None:
        super().__init__(at_least_one_of=at_least_one_of)
        self._on = tuple(on)

    def do_draw(self, data: ConjectureData) -> FeatureFlags:
        return FeatureFlags(data, enabled=self._on, at_least_one_of=at_least_one_of(self))


def keep_on(machine: RuleBasedStateMachine, rules: Iterable[str]) -> None:
    """Make Hypothesis's swarm leave `rules` (rule names) enabled in every run of
    `machine`; call it from the machine's `__init__`, after `RuleBasedStateMachine`'s."""
    strategy = rules_strategy(machine)  # Hypothesis's RuleStrategy for this run
    names = rule_names(strategy)
    unknown = set(rules) - names
    if unknown:
        raise ValueError(f"{type(machine).__name__} has no rule(s) {sorted(unknown)}")
    # The same sharing key as Hypothesis's own: one set of flags per run of this machine.
    set_enabled_rules_strategy(strategy, st.shared(
        _SomeAlwaysOn(sorted(rules), names), key=("enabled rules", machine)
    ))
