"""The wall-clock step budget: a mesh blocked in a step (asleep, waiting on a lock), which
uses no CPU and so never meets the CPU budget, fails the run with `MeshHung` naming the step
within `HARNESS_STEP_WALL_BUDGET`; the unblocked mesh passes the same program within the
same budget, and an outer alarm on the same timer (pytest-timeout's) is put back after."""

from __future__ import annotations

import signal
import threading
import time

import pytest

from invariants.dynamic.runner import run_program
from invariants.dynamic.seed_programs import SEED_PROGRAMS
from invariants.step_budget import (
    STEP_BUDGET_ENV,
    STEP_WALL_BUDGET_ENV,
    WALL_BUDGET_FACTOR,
    cpu_alarm,
    step_wall_budget_seconds,
)
from reference_impl.adapter import ReferenceAdapter, make_adapter

PROGRAM = SEED_PROGRAMS["INV1"]["rejection"]  # init, three posts, then an advance
# The budget is a second, not less: the unblocked mesh must pass within it on a loaded machine.


class Asleep(ReferenceAdapter):
    def advance(self, ms: int) -> None:
        time.sleep(1000)


_LOCK = threading.Lock()


class Waiting(ReferenceAdapter):
    def advance(self, ms: int) -> None:
        with _LOCK:  # held by the test: never acquired
            super().advance(ms)


@pytest.mark.parametrize("adapter", [Asleep, Waiting])
def test_a_blocked_step_fails_as_hung_and_names_the_step(
    monkeypatch: pytest.MonkeyPatch, adapter: type[ReferenceAdapter]
) -> None:
    monkeypatch.setenv(STEP_WALL_BUDGET_ENV, "1")
    with _LOCK:
        outcome = run_program("INV1", adapter, PROGRAM, name="rejection")
    assert outcome.verdict == "error"
    assert outcome.failure_text is not None
    first = outcome.failure_text.splitlines()[0]
    assert first.startswith("MeshHung: step 'advance' at 0 ms did not return within 1 "
                            "seconds of wall-clock time: the mesh hung, blocked"), first
    assert STEP_WALL_BUDGET_ENV in first


def test_the_unblocked_mesh_passes_within_the_same_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(STEP_WALL_BUDGET_ENV, "1")
    outcome = run_program("INV1", make_adapter, PROGRAM, name="rejection")
    assert outcome.verdict == "pass", outcome.failure_text


def test_a_longer_outer_alarm_is_put_back_and_a_shorter_one_holds() -> None:
    fired: list[str] = []

    def outer(_signum: int, _frame: object) -> None:
        fired.append("outer")

    previous = signal.signal(signal.SIGALRM, outer)
    saved = signal.setitimer(signal.ITIMER_REAL, 0)  # pytest-timeout's, if it set one
    try:
        signal.setitimer(signal.ITIMER_REAL, 500.0)
        with cpu_alarm(50.0, signal.ITIMER_REAL, signal.SIGALRM, TimeoutError):
            assert 0 < signal.getitimer(signal.ITIMER_REAL)[0] <= 50.0  # ours, meanwhile
        left = signal.getitimer(signal.ITIMER_REAL)[0]
        assert 50.0 < left <= 500.0  # the outer alarm, due when it was
        assert signal.getsignal(signal.SIGALRM) is outer
        signal.setitimer(signal.ITIMER_REAL, 5.0)
        with cpu_alarm(50.0, signal.ITIMER_REAL, signal.SIGALRM, TimeoutError):
            assert signal.getsignal(signal.SIGALRM) is outer  # it ends first: it holds
    finally:
        signal.setitimer(signal.ITIMER_REAL, *saved)
        signal.signal(signal.SIGALRM, previous)
    assert fired == []


@pytest.mark.parametrize(("cpu", "wall", "expected"), [
    ("", "", 20.0 * WALL_BUDGET_FACTOR),
    ("0.5", "", 0.5 * WALL_BUDGET_FACTOR),
    ("0", "", 0.0),  # no CPU budget: none of wall-clock time either, unless asked
    ("0", "7", 7.0),
    ("", " 2.5 ", 2.5),
])
def test_the_wall_budget_reads_the_environment(
    monkeypatch: pytest.MonkeyPatch, cpu: str, wall: str, expected: float
) -> None:
    monkeypatch.setenv(STEP_BUDGET_ENV, cpu)
    monkeypatch.setenv(STEP_WALL_BUDGET_ENV, wall)
    assert step_wall_budget_seconds() == expected


@pytest.mark.parametrize("raw", ["soon", "-1"])
def test_a_bad_wall_budget_is_a_one_line_error_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, raw: str
) -> None:
    monkeypatch.setenv(STEP_WALL_BUDGET_ENV, raw)
    with pytest.raises(ValueError, match=rf"^{STEP_WALL_BUDGET_ENV}="):
        step_wall_budget_seconds()
