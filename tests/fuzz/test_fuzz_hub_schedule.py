"""The hub on the harness's schedule: its assignment, and workers' lists of valid tests
that start with their tests (HypoFuzz's hub exits when all of them are empty)."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("hypofuzz", reason="needs the fuzz extra: pip install -e '.[fuzz]'")

from hypofuzz.hypofuzz import FuzzWorkerHub

from invariants.fuzzing.sliced_worker import rebalance, slice_from_environ

NODES = ["t.py::TestINV1::runTest", "t.py::TestINV2::runTest", "t.py::TestINV3::runTest"]


def _hub(workers: int) -> Any:
    hub: Any = FuzzWorkerHub(nodeids=NODES, pytest_args=[], n_processes=workers)
    hub.shared_states = [
        {"hub_state": {}, "worker_state": {"valid_nodeids": []}} for _ in range(workers)
    ]
    return hub


def _idle(hub: Any) -> bool:
    """HypoFuzz's own exit condition: no worker has a valid test."""
    return all(not state["worker_state"]["valid_nodeids"] for state in hub.shared_states)


def test_hypofuzz_alone_gives_worker_i_the_tests_from_i_on_and_looks_idle() -> None:
    control = _hub(2)
    control._rebalance()  # the class is unpatched unless a launcher installed the schedule
    assert _idle(control)
    assert sorted(control.shared_states[0]["hub_state"]["nodeids"]) == sorted(NODES)


def test_the_harness_deals_the_tests_and_counts_them_valid_until_workers_report() -> None:
    hub = _hub(2)
    rebalance(hub)
    assert [s["hub_state"]["nodeids"] for s in hub.shared_states] == [
        [NODES[0], NODES[2]],
        [NODES[1]],
    ]
    assert not _idle(hub)
    # Later rebalances leave the workers' own reports alone: when all report none, it exits.
    for state in hub.shared_states:
        state["worker_state"]["valid_nodeids"] = []
    rebalance(hub)
    assert _idle(hub)


def test_more_workers_than_tests_all_get_one() -> None:
    hub = _hub(5)
    rebalance(hub)
    assert [s["hub_state"]["nodeids"] for s in hub.shared_states] == [
        [NODES[0]], [NODES[1]], [NODES[2]], [NODES[0]], [NODES[1]]
    ]


def test_the_slice_comes_from_the_environment_with_a_floor() -> None:
    assert slice_from_environ({"HARNESS_FUZZ_SLICE_SECONDS": "2.5"}) == 2.5
    assert slice_from_environ({"HARNESS_FUZZ_SLICE_SECONDS": "0.01"}) == 1.0
    assert slice_from_environ({}) == 1.0


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class _Target:
    """Stands in for HypoFuzz's FuzzTarget: each example takes 0.5 virtual seconds."""

    def __init__(self, nodeid: str, clock: _Clock, log: list[str], fails_after: int = 0):
        self.nodeid, self.clock, self.log = nodeid, clock, log
        self.fails_after = fails_after
        self.failed_fatally = self.skipped_dynamically = False

    @property
    def has_found_failure(self) -> bool:
        return bool(self.fails_after) and self.log.count(self.nodeid) >= self.fails_after

    def run_one(self) -> None:
        self.log.append(self.nodeid)
        self.clock.now += 0.5

    def _enter_fixtures(self) -> None: ...
    def _exit_fixtures(self) -> None: ...
    def save_report(self) -> None: ...


def _worker(clock: _Clock, log: list[str], fails: dict[str, int]) -> Any:
    from hypofuzz.hypofuzz import FuzzWorker

    from invariants.fuzzing.sliced_worker import SlicedWorker

    worker: Any = SlicedWorker.__new__(SlicedWorker)
    FuzzWorker.__init__(worker, pytest_args=[], shared_state={
        "hub_state": {"nodeids": list(NODES)},
        "worker_state": {"nodeids": {}, "valid_nodeids": list(NODES)},
    })
    worker.worker_start = 0.0
    worker.targets = {n: _Target(n, clock, log, fails.get(n, 0)) for n in NODES}
    return worker


def test_a_worker_rotates_through_its_tests_in_slices_and_drops_a_failed_one() -> None:
    from invariants.fuzzing.schedule import Rotation

    clock, log = _Clock(), []
    worker = _worker(clock, log, fails={NODES[1]: 1})
    worker.rotate(Rotation(slice_seconds=1.0, clock=clock), turns=5)
    # Two examples per 1 s slice, in order; INV2 stops at its failure and is skipped after.
    assert log == [NODES[0], NODES[0], NODES[1], NODES[2], NODES[2],
                   NODES[0], NODES[0], NODES[2], NODES[2]]
    assert worker.shared_state["worker_state"]["valid_nodeids"] == [NODES[0], NODES[2]]


def test_a_shrink_that_runs_out_of_its_slice_does_not_stop_the_worker() -> None:
    from hypofuzz.hypofuzz import HitShrinkTimeoutError

    from invariants.fuzzing.schedule import Rotation

    clock, log = _Clock(), []
    worker = _worker(clock, log, fails={NODES[0]: 1})
    failing = worker.targets[NODES[0]]

    def shrink_times_out() -> None:
        _Target.run_one(failing)
        raise HitShrinkTimeoutError

    failing.run_one = shrink_times_out
    worker.rotate(Rotation(slice_seconds=1.0, clock=clock), turns=3)
    assert log == [NODES[0], NODES[1], NODES[1], NODES[2], NODES[2]]


def test_pending_database_writes_are_written_out_before_the_worker_exits() -> None:
    import threading

    from hypothesis.database import BackgroundWriteDatabase, InMemoryExampleDatabase

    from invariants.fuzzing.sliced_worker import flush_pending_writes

    release = threading.Event()

    class Slow(InMemoryExampleDatabase):
        def save(self, key: bytes, value: bytes) -> None:
            release.wait()  # the write is still queued until released
            super().save(key, value)

    inner = Slow()
    queued = BackgroundWriteDatabase(inner)
    queued.save(b"k", b"failure")
    assert not inner.data  # control: the value is not written yet
    threading.Timer(0.2, release.set).start()  # the write goes through while we wait
    assert flush_pending_writes(timeout=30.0) >= 1
    assert set(inner.data.get(b"k", ())) == {b"failure"}


def test_hypofuzz_s_shrink_is_cut_after_one_slice(monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    from hypofuzz.database import Phase
    from hypofuzz.hypofuzz import HitShrinkTimeoutError

    import invariants.fuzzing.sliced_worker as sliced

    clock = _Clock()
    monkeypatch.setattr(sliced, "_clock", clock)
    monkeypatch.setattr(sliced, "_shrink_seconds", 2.0)
    runs: list[object] = []
    monkeypatch.setattr(sliced, "_UNCUT_EXECUTE_ONCE", lambda self, data, **kw: runs.append(data))
    target = SimpleNamespace(provider=SimpleNamespace(phase=Phase.GENERATE))
    clock.now = 100.0
    sliced.cut_shrink_at_one_slice(target, "generating")  # not shrinking: never cut
    target.provider.phase = Phase.SHRINK
    sliced.cut_shrink_at_one_slice(target, "shrink 1")  # the shrink starts at 100 s
    clock.now = 101.5
    sliced.cut_shrink_at_one_slice(target, "shrink 2")
    clock.now = 102.5
    with pytest.raises(HitShrinkTimeoutError):
        sliced.cut_shrink_at_one_slice(target, "shrink 3")
    assert runs == ["generating", "shrink 1", "shrink 2", "shrink 3"]  # each one ran
