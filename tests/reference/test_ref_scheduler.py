"""The virtual clock: integer milliseconds, ties resolved by the injected chooser (SPEC §2
"Virtual time and determinism")."""

from __future__ import annotations

import pytest

from invariants.adapter import FirstChooser, SeededChooser
from reference_impl.scheduler import Scheduler


class LastChooser:
    """Always the last ready event: the reverse of FIFO."""

    def __init__(self) -> None:
        self.asked: list[tuple[int, str]] = []

    def choose(self, options: int, why: str) -> int:
        self.asked.append((options, why))
        return options - 1


def _record(scheduler: Scheduler, log: list[str], name: str) -> None:
    log.append(f"{name}@{scheduler.now}")


def test_events_run_in_time_order_and_the_clock_jumps() -> None:
    scheduler = Scheduler(FirstChooser())
    log: list[str] = []
    scheduler.at(30_000, _record, scheduler, log, "late")
    scheduler.at(250, _record, scheduler, log, "early")
    scheduler.run_until(60_000)
    assert log == ["early@250", "late@30000"]
    assert scheduler.now == 60_000


def test_ties_are_resolved_by_the_chooser_not_by_insertion() -> None:
    chooser = LastChooser()
    scheduler = Scheduler(chooser)
    log: list[str] = []
    for name in ("a", "b", "c"):
        scheduler.at(5, _record, scheduler, log, name)
    scheduler.run_until(5)
    assert log == ["c@5", "b@5", "a@5"]
    assert chooser.asked == [(3, "next-event"), (2, "next-event")]


def test_fifo_chooser_keeps_scheduling_order_for_ties() -> None:
    scheduler = Scheduler(FirstChooser())
    log: list[str] = []
    for name in ("a", "b", "c"):
        scheduler.at(5, _record, scheduler, log, name)
    scheduler.run_until(5)
    assert log == ["a@5", "b@5", "c@5"]


def test_an_event_scheduled_now_joins_the_running_batch() -> None:
    scheduler = Scheduler(FirstChooser())
    log: list[str] = []

    def first() -> None:
        log.append("first")
        scheduler.at(scheduler.now, log.append, "spawned")

    scheduler.at(1, first)
    scheduler.at(1, log.append, "second")
    scheduler.at(2, log.append, "later")
    scheduler.run_until(10)
    assert log == ["first", "second", "spawned", "later"]


def test_cancelled_timers_never_run() -> None:
    scheduler = Scheduler()
    log: list[str] = []
    timer = scheduler.at(10, log.append, "cancelled")
    scheduler.at(10, log.append, "kept")
    timer.cancel()
    scheduler.run_until(100)
    assert log == ["kept"]
    assert scheduler.run(10**9)  # nothing left scheduled


def test_scheduling_in_the_past_is_refused() -> None:
    scheduler = Scheduler()
    scheduler.run_until(100)
    with pytest.raises(ValueError, match="past"):
        scheduler.at(99, print)


@pytest.mark.parametrize("seed", [0, 7, 123])
def test_same_seed_gives_the_same_interleaving(seed: int) -> None:
    def run() -> list[int]:
        scheduler = Scheduler(SeededChooser(seed))
        log: list[int] = []
        for i in range(20):
            scheduler.at(i % 3, log.append, i)
        scheduler.run_until(10)
        return log

    first = run()
    assert first == run()
    assert sorted(first) == list(range(20))


def test_cancelled_ready_events_do_not_let_a_bounded_run_overshoot() -> None:
    scheduler = Scheduler()
    log: list[str] = []
    scheduler.at(0, log.append, "now")  # due now, then cancelled
    scheduler.at(0, log.append, "now too")
    scheduler.at(1_000, log.append, "later")
    for timer in list(scheduler._ready):
        timer.cancel()
    scheduler.run_until(500)
    assert log == [] and scheduler.now == 500
    assert not scheduler.run(999) and scheduler.now == 500  # "later" is not due yet
    assert scheduler.run(1_000) and log == ["later"]


class OutOfRangeChooser:
    def choose(self, options: int, why: str) -> int:
        return options


def test_a_chooser_answer_out_of_range_is_a_clear_error() -> None:
    scheduler = Scheduler(OutOfRangeChooser())
    scheduler.at(0, print)
    scheduler.at(0, print)
    with pytest.raises(ValueError, match="picked 2 of 2"):
        scheduler.run(10)
