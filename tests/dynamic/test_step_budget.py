"""The step budget: a mesh that never returns from a step fails the run with `MeshHung`
instead of hanging it; a mutation run gives its mutants a budget derived from the unmutated
mesh's slowest step. Negative control: Cosmic Ray's mutant of the stop's stage walk that
re-enters the same stage at the same instant for ever (`index + 1` -> `index // 1` in
`Silo._leave`); the unmutated mesh passes the same program within the same budget."""

from __future__ import annotations

import signal

import pytest

from invariants.dynamic.runner import run_program
from invariants.dynamic.seed_programs import SEED_PROGRAMS
from invariants.mutants.matrix import reference_scan_config, scan_sources
from invariants.mutants.score.engine import apply, enumerate_file
from invariants.mutants.score.evaluate import (
    Baseline,
    build,
    finding_key,
    forget,
    judge,
    package_name,
)
from invariants.mutants.score.target import reference_target
from invariants.step_budget import (
    STEP_BUDGET_ENV,
    STEP_BUDGET_SECONDS,
    STEP_WALL_BUDGET_ENV,
    cpu_alarm,
    derived_budget,
    limited,
    step_budget_seconds,
    steps_seen,
)
from reference_impl.adapter import make_adapter

pytest.importorskip("cosmic_ray")

PROGRAM = SEED_PROGRAMS["INV5"]["stop-with-legs"]


def _cpu_budget_only(monkeypatch: pytest.MonkeyPatch) -> None:
    # No wall-clock budget: on a loaded machine a spinning step can get less than a sixth of a
    # core, and the wall-clock budget (six times the CPU one) would fire first.
    monkeypatch.setenv(STEP_BUDGET_ENV, "0.5")
    monkeypatch.setenv(STEP_WALL_BUDGET_ENV, "0")


def _stage_walk_never_advances() -> dict[str, str]:
    target = reference_target(reference_scan_config())
    source = target.sources["lifecycle.py"]
    operators = ("core/ReplaceBinaryOperator_Add_FloorDiv",)
    [mutant] = [
        m for m in enumerate_file("lifecycle.py", source, operators) if m.function == "Silo._leave"
    ]
    return {**target.sources, "lifecycle.py": apply(mutant, source)}


def test_a_hung_step_fails_the_run_and_names_the_step(monkeypatch: pytest.MonkeyPatch) -> None:
    _cpu_budget_only(monkeypatch)
    sources = _stage_walk_never_advances()
    target = reference_target(reference_scan_config())
    _dir, factory = build(target, "hang", sources)
    try:
        outcome = run_program("INV5", factory, PROGRAM, name="stop-with-legs")
    finally:
        forget(package_name("hang", sources))
    assert outcome.verdict == "error"
    assert outcome.failure_text is not None
    first = outcome.failure_text.splitlines()[0]
    assert first.startswith("MeshHung: run_until_idle(")
    assert "did not return within 0.5 CPU seconds" in first


def test_the_unmutated_mesh_passes_within_the_same_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    _cpu_budget_only(monkeypatch)
    outcome = run_program("INV5", make_adapter, PROGRAM, name="stop-with-legs")
    assert outcome.verdict == "pass", outcome.failure_text


@pytest.mark.parametrize(("raw", "expected"), [("", 20.0), (" 2.5 ", 2.5), ("0", 0.0)])
def test_the_budget_reads_the_environment(
    monkeypatch: pytest.MonkeyPatch, raw: str, expected: float
) -> None:
    monkeypatch.setenv(STEP_BUDGET_ENV, raw)
    assert step_budget_seconds() == expected


@pytest.mark.parametrize("raw", ["soon", "-1"])
def test_a_bad_budget_is_a_one_line_error_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, raw: str
) -> None:
    monkeypatch.setenv(STEP_BUDGET_ENV, raw)
    with pytest.raises(ValueError, match=rf"^{STEP_BUDGET_ENV}="):
        step_budget_seconds()


@pytest.mark.parametrize(("slowest", "expected"), [(0.004, 2.0), (1.1, 4.0), (8.0, 20.0)])
def test_a_mutants_budget_is_three_times_the_slowest_step_within_bounds(
    monkeypatch: pytest.MonkeyPatch, slowest: float, expected: float
) -> None:
    monkeypatch.delenv(STEP_BUDGET_ENV, raising=False)
    assert derived_budget(slowest) == expected
    monkeypatch.setenv(STEP_BUDGET_ENV, "7.5")  # the variable is the budget everywhere
    assert derived_budget(slowest) == 7.5


def test_the_slowest_step_is_measured_and_a_limit_is_put_in_force(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(STEP_BUDGET_ENV, raising=False)
    with steps_seen() as seen:
        assert seen().slowest == 0.0
        run_program("INV5", make_adapter, PROGRAM, name="stop-with-legs")
        measured = seen()
    assert 0.0 < measured.slowest < STEP_BUDGET_SECONDS and not measured.hung
    with limited(3.0):
        assert step_budget_seconds() == 3.0
        monkeypatch.setenv(STEP_BUDGET_ENV, "4")
        assert step_budget_seconds() == 4.0
    monkeypatch.delenv(STEP_BUDGET_ENV)
    assert step_budget_seconds() == STEP_BUDGET_SECONDS


@pytest.mark.slow
def test_a_mutant_that_hangs_is_killed_within_its_derived_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A mutation run's judge puts the baseline's budget in force: the hung mutant is a kill
    by the first thing that runs it, naming the budget (not the default 20 s)."""
    monkeypatch.delenv(STEP_BUDGET_ENV, raising=False)
    monkeypatch.setenv(STEP_WALL_BUDGET_ENV, "0")  # as above: the CPU budget alone
    target = reference_target(reference_scan_config())
    findings = frozenset(finding_key(f) for f in
                         scan_sources(target.sources, target.scan_config).findings)
    baseline = Baseline(findings, target.checks, step_budget=1.0)
    verdict = judge(target, baseline, "hang", _stage_walk_never_advances())
    assert verdict.status == "killed", verdict
    assert "did not return within 1 CPU seconds" in verdict.evidence
    # What a cached copy of it needs: it holds under this budget and no other.
    assert verdict.hung and verdict.budget == 1.0
    assert verdict.holds_under(1.0) and not verdict.holds_under(2.0)


@pytest.mark.slow
def test_the_unmutated_meshs_budget_follows_its_slowest_step(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The budget a mutation run derives is read from the steps the measure saw (it was
    read after the measure had ended, which always gave the floor)."""
    from dataclasses import replace

    from invariants import step_budget
    from invariants.mutants.score.baseline import measure

    monkeypatch.delenv(STEP_BUDGET_ENV, raising=False)
    monkeypatch.setattr(step_budget, "MUTANT_STEP_FACTOR", 1e6)  # any step: the ceiling
    target = replace(reference_target(reference_scan_config()), checks=("INV5",),
                     conformance=False)
    assert measure(target, "ci", guided=False).step_budget == STEP_BUDGET_SECONDS
    monkeypatch.setattr(step_budget, "MUTANT_STEP_FACTOR", 0.0)  # none: the floor
    assert measure(target, "ci", guided=False).step_budget == step_budget.MUTANT_STEP_FLOOR


def test_steps_seen_keeps_its_measure_after_the_block_and_counts_a_hang(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from invariants.adapter_calls import MeshHung
    from invariants.step_budget import within_budget

    monkeypatch.setenv(STEP_BUDGET_ENV, "0.2")
    monkeypatch.setenv(STEP_WALL_BUDGET_ENV, "0")
    with steps_seen() as outer:
        with steps_seen() as inner, within_budget("a quick step"):
            pass
        with pytest.raises(MeshHung), within_budget("a step that never ends"):
            while True:
                pass
    assert not inner().hung and inner().slowest < 0.2
    assert outer().hung and outer().slowest == inner().slowest


def test_a_repeated_alarm_does_not_replace_the_first_on_its_way_up() -> None:
    """The alarm repeats every half second; one that lands while the first expiry is still
    unwinding (in a `finally`, or the `__exit__` of the budget's own context manager) must
    not raise again there, where nothing would convert it."""

    class Expired(BaseException):
        pass

    alarm = (signal.ITIMER_PROF, signal.SIGPROF, Expired)
    with pytest.raises(Expired) as caught, cpu_alarm(60.0, *alarm):
        try:
            raise Expired("the first")
        finally:
            signal.raise_signal(signal.SIGPROF)  # the repeat, as it unwinds
    assert caught.value.args == ("the first",)
    with pytest.raises(Expired) as swallowed, cpu_alarm(60.0, *alarm):
        try:
            raise Expired("the first")
        except Expired:
            pass  # ... a swallowed one is raised again
        signal.raise_signal(signal.SIGPROF)
    assert swallowed.value.args == ()
