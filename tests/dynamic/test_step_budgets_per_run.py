"""The step budgets are resolved once for a run and handed to its steps: a machine reads
the variables when it is made, a step armed with the run's budgets uses them whatever the
environment says by then, and `step_budgets` is the two figures `within_budget` arms."""

from __future__ import annotations

import time

import pytest

from invariants.adapter_calls import MeshHung
from invariants.dynamic.plans import machine_class
from invariants.step_budget import (
    STEP_BUDGET_ENV,
    STEP_BUDGET_SECONDS,
    STEP_WALL_BUDGET_ENV,
    WALL_BUDGET_FACTOR,
    StepBudgetError,
    StepBudgets,
    limited,
    step_budgets,
    within_budget,
)
from reference_impl.adapter import make_adapter


def _spin(cpu_seconds: float) -> None:
    end = time.process_time() + cpu_seconds
    while time.process_time() < end:
        pass


def test_step_budgets_reads_both_variables_and_the_limit_in_force() -> None:
    assert step_budgets({}) == StepBudgets(STEP_BUDGET_SECONDS,
                                           WALL_BUDGET_FACTOR * STEP_BUDGET_SECONDS)
    assert step_budgets({STEP_BUDGET_ENV: "2"}) == StepBudgets(2.0, WALL_BUDGET_FACTOR * 2)
    assert step_budgets({STEP_BUDGET_ENV: "2", STEP_WALL_BUDGET_ENV: "0"}) == StepBudgets(2, 0)
    with limited(3.0):
        assert step_budgets({}) == StepBudgets(3.0, WALL_BUDGET_FACTOR * 3)
    assert step_budgets({}).cpu == STEP_BUDGET_SECONDS


def test_a_step_given_the_runs_budgets_keeps_them_whatever_the_environment_says(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(STEP_BUDGET_ENV, "0")  # no budget now: the run's is 0.2 s
    with pytest.raises(MeshHung, match=r"^a spin did not return within 0.2 CPU seconds"), \
            within_budget("a spin", StepBudgets(0.2, 0)):
        _spin(30)


def test_control_a_step_given_no_budget_runs_past_what_the_environment_says(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(STEP_BUDGET_ENV, "0.2")
    with within_budget("a spin", StepBudgets(0, 0)):
        _spin(0.4)
    with pytest.raises(MeshHung), within_budget("a spin"):  # resolved now: 0.2 s
        _spin(30)


def test_a_machine_resolves_its_budgets_once_when_it_is_made(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    machine = machine_class("INV1", make_adapter)
    monkeypatch.setenv(STEP_BUDGET_ENV, "0.5")
    run = machine()
    assert run.budgets == StepBudgets(0.5, WALL_BUDGET_FACTOR * 0.5)
    monkeypatch.setenv(STEP_BUDGET_ENV, "soon")  # read again, it would be an error
    run.acting(lambda: None, "a step")
    # The control: a machine made now reads the variable, and says it is no number.
    with pytest.raises(StepBudgetError, match=r"HARNESS_STEP_BUDGET='soon': not a number"):
        machine()
