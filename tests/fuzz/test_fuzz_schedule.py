"""The harness's schedule: every test to some worker, every worker used, each worker
rotating through its tests in slices (on a virtual clock here)."""

from __future__ import annotations

from typing import Any

import pytest

from invariants.fuzzing.schedule import (
    MAX_SLICE_SECONDS,
    MIN_SLICE_SECONDS,
    ROUNDS,
    Rotation,
    assign,
    slice_seconds,
)

TESTS = [f"INV{i}" for i in range(1, 8)]


@pytest.mark.parametrize("workers", [1, 2, 3, 7, 8, 15])
def test_every_test_goes_to_a_worker_and_every_worker_gets_tests(workers: int) -> None:
    plan = assign(TESTS, workers)
    assert len(plan) == workers
    assert all(plan)  # no idle worker, also with more workers than tests
    assert {t for tests in plan for t in tests} == set(TESTS)
    # Fair: the workers' loads differ by one test at most.
    assert max(map(len, plan)) - min(map(len, plan)) <= 1


def test_two_workers_deal_seven_tests_round_robin() -> None:
    assert assign(TESTS, 2) == [
        ["INV1", "INV3", "INV5", "INV7"],
        ["INV2", "INV4", "INV6"],
    ]


def test_more_workers_than_tests_double_up_in_turn() -> None:
    assert assign(["INV4", "INV5"], 5) == [["INV4"], ["INV5"], ["INV4"], ["INV5"], ["INV4"]]


def test_slices_give_each_test_of_a_worker_its_rounds_in_the_box() -> None:
    box = 300.0
    length = slice_seconds(box, tests=7, workers=2)  # 4 tests on the busiest worker
    assert length == pytest.approx(box / (4 * ROUNDS))  # the box starts after start-up
    assert slice_seconds(18.0, tests=7, workers=2) >= MIN_SLICE_SECONDS
    assert slice_seconds(1.0, tests=7, workers=2) == MIN_SLICE_SECONDS
    assert slice_seconds(10 * 3600.0, tests=7, workers=2) == MAX_SLICE_SECONDS


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_rotation_turns_through_the_tests_in_order_and_skips_failed_ones() -> None:
    rotation = Rotation(slice_seconds=2.0, clock=_Clock())
    tests = ["a", "b", "c"]
    assert [rotation.pick(tests, lambda t: True) for _ in range(4)] == ["a", "b", "c", "a"]
    # "b" drops out after "a"'s turn: "c" is next, not "a" again.
    assert [rotation.pick(tests, lambda t: t != "b") for _ in range(3)] == ["c", "a", "c"]
    assert rotation.pick(tests, lambda t: False) is None
    assert rotation.pick([], lambda t: True) is None


def test_a_slice_runs_until_its_time_is_up_and_at_least_one_example() -> None:
    clock = _Clock()
    rotation = Rotation(slice_seconds=2.0, clock=clock)
    ran: list[float] = []

    def example(seconds: float) -> Any:
        def run() -> None:
            ran.append(clock.now)
            clock.now += seconds

        return run

    assert rotation.run_slice(example(0.5), done=lambda: False) == 4
    # An example longer than the slice still runs once.
    assert rotation.run_slice(example(5.0), done=lambda: False) == 1
    # A test that has failed runs no more.
    assert rotation.run_slice(example(0.5), done=lambda: True) == 0


def test_each_test_s_share_is_the_box_s_worker_seconds_split_evenly() -> None:
    from invariants.fuzzing.schedule import share_seconds

    assert share_seconds(18.0, tests=7, workers=2) == pytest.approx(36 / 7)
    assert share_seconds(18.0, tests=2, workers=4) == pytest.approx(36.0)


def test_a_session_uses_every_worker_and_tells_them_the_slice(tmp_path: Any) -> None:
    from invariants.fuzzing.config import FuzzConfig
    from invariants.fuzzing.schedule import ENV_SLICE_SECONDS
    from invariants.fuzzing.session import SessionPlan, session_environ

    plan = SessionPlan(FuzzConfig(invariants=("INV4", "INV5")), workers=5, seconds=18.0)
    assert plan.processes == 5  # more workers than tests: all of them run
    env = session_environ(plan, {}, tmp_path, tmp_path)
    assert float(env[ENV_SLICE_SECONDS]) == pytest.approx(plan.slice_seconds)
    assert plan.slice_seconds == pytest.approx(18.0 / ROUNDS)
