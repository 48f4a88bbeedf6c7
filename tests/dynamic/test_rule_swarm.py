"""`keep_on`: Hypothesis's rule swarm leaves the named rules on in every run, and still
switches the others off (the negative control: without it, the core rule is off in some)."""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import pytest
from hypothesis import settings
from hypothesis.stateful import RuleBasedStateMachine, rule, run_state_machine_as_test

from invariants.dynamic.rule_swarm import keep_on

_run_machine = cast(Callable[..., None], run_state_machine_as_test)  # untyped in Hypothesis


def _disabled_per_run(kept: frozenset[str]) -> list[set[str]]:
    """For each run of a three-rule machine, the rules its feature flags switched off."""
    runs: list[set[str]] = []

    class Toy(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            if kept:
                keep_on(self, kept)
            self.disabled: set[str] = set()
            runs.append(self.disabled)

        @rule()
        def core(self) -> None:
            self._note()

        @rule()
        def extra(self) -> None:
            self._note()

        @rule()
        def other(self) -> None:
            self._note()

        def _note(self) -> None:
            flags = self._rules_strategy._feature_flags
            assert flags is not None  # set as the rule was drawn
            # Asking replays a decided flag and draws an undecided one.
            self.disabled |= {name for name in ("core", "extra", "other")
                              if not flags.is_enabled(name)}

    _run_machine(
        Toy, settings=settings(max_examples=200, stateful_step_count=4, derandomize=True,
                               database=None)
    )
    return runs


def test_a_kept_rule_is_on_in_every_run_and_the_others_still_swarm() -> None:
    runs = _disabled_per_run(frozenset({"core"}))
    assert len(runs) > 50
    assert not any("core" in disabled for disabled in runs)
    assert any("extra" in disabled for disabled in runs)  # the swarm still works


def test_without_it_hypothesis_switches_the_core_rule_off_in_some_runs() -> None:
    runs = _disabled_per_run(frozenset())
    assert any("core" in disabled for disabled in runs)


def test_an_unknown_rule_is_an_error_at_once() -> None:
    class Empty(RuleBasedStateMachine):
        @rule()
        def only(self) -> None:
            pass

    with pytest.raises(ValueError, match=r"Empty has no rule\(s\) \['missing'\]"):
        keep_on(Empty(), {"missing"})


def test_a_hypothesis_without_the_swarm_attribute_is_an_error_not_a_no_op() -> None:
    class Machine(RuleBasedStateMachine):
        @rule()
        def only(self) -> None:
            pass

    machine = Machine()
    del machine._rules_strategy.enabled_rules_strategy
    with pytest.raises(RuntimeError, match="rule_swarm needs updating"):
        keep_on(machine, {"only"})
