"""HypoFuzz's hub and workers on the harness's schedule (`schedule`).

- The hub assigns the tests with `schedule.assign` (each worker's list in order), and a
  worker's list of still-valid tests starts as the tests it was given: the hub exits when
  every worker reports none left, checked once a minute, and a worker first reports after
  its first slice, so without that the hub could read the initial empty lists as "done".
- `SlicedWorker` replaces HypoFuzz's worker loop (a test picked by its estimated rate of
  new behaviours, 100 examples at a time) with a rotation through the worker's tests in
  time slices of `HARNESS_FUZZ_SLICE_SECONDS`. HypoFuzz's own shrink of a failure is cut
  at one slice of wall-clock time too (`cut_shrink_at_one_slice`; HypoFuzz's own limit
  counts time its shrink runs never add to): the harness shrinks the saved failure itself
  after the session.
- A worker forked from the hub reuses the hub's collection of the tests (`collect_once`)
  instead of running pytest's collection again, and logs its start-up phases (`startup`).
- On SIGTERM (the session's stop) a worker first writes out what HypoFuzz still holds
  in its background write queues (a failure just found, corpus entries, progress
  reports), then exits; the session waits for that within its grace period.

`install` applies both; `hypofuzz_main` calls it in the launcher and in every worker.
"""

from __future__ import annotations

import gc
import os
import signal
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from random import Random
from typing import Any

from hypothesis import settings
from hypothesis.database import BackgroundWriteDatabase

from invariants.engine_internals import hypofuzz_private
from invariants.engine_internals.hypofuzz_database import HypofuzzDatabase, Phase
from invariants.engine_internals.hypofuzz_private import (
    FailedFatally,
    FuzzWorker,
    FuzzWorkerHub,
    HitShrinkTimeoutError,
    process_uuid,
    replace_collect_tests,
    replace_execute_once,
    replace_rebalance,
    replace_worker_class,
    switch_to_target,
    update_targets,
)
from invariants.engine_internals.hypothesis_private import (
    join_background_writes,
    pytest_skip_exceptions,
)
from invariants.fuzzing import startup
from invariants.fuzzing.schedule import ENV_SLICE_SECONDS, MIN_SLICE_SECONDS, Rotation, assign

# pytest's skip exceptions, which Hypothesis re-raises.
_SKIPS: tuple[type[BaseException], ...] = pytest_skip_exceptions()
IDLE_SECONDS = 1.0  # a worker whose tests all failed waits for the hub (or the stop)
FLUSH_SECONDS = 2.0  # per queue: what a worker may spend writing out at the stop


def slice_from_environ(environ: Mapping[str, str]) -> float:
    try:
        return max(MIN_SLICE_SECONDS, float(environ.get(ENV_SLICE_SECONDS, "")))
    except ValueError:
        return MIN_SLICE_SECONDS


def rebalance(hub: Any) -> None:
    """`FuzzWorkerHub._rebalance` on the harness's assignment."""
    partitions = assign(list(hub.nodeids), hub.n_processes)
    first = not getattr(hub, "_harness_rebalanced", False)
    if first:  # called once the hub has collected the tests and started its manager
        startup.mark(startup.HUB_COLLECTED)
    for state, nodeids in zip(hub.shared_states, partitions, strict=True):
        state["hub_state"]["nodeids"] = list(nodeids)
        if first:
            state["worker_state"]["valid_nodeids"] = list(nodeids)
    hub._harness_rebalanced = True


class SlicedWorker(FuzzWorker):
    """A HypoFuzz worker that rotates through its tests in time slices."""

    first_example_done = False  # start-up is over (`startup.FIRST_EXAMPLE`)

    def start(self) -> None:
        signal.signal(signal.SIGTERM, _flush_and_exit)
        startup.mark(startup.WORKER_STARTED)
        self.worker_start = time.perf_counter()
        rotation = Rotation(slice_from_environ(os.environ))
        global _shrink_seconds
        _shrink_seconds = rotation.slice_seconds
        collected = collect_once(self.pytest_args)
        self.collected_targets = {t.nodeid: t for t in collected.fuzz_targets}
        startup.mark(startup.WORKER_COLLECTED)
        # After collection: the targets module has loaded the session's database.
        settings().database.add_listener(self.on_event)
        self.db = HypofuzzDatabase(settings().database)
        self.db.worker_uuids.save(process_uuid.encode("ascii"))
        startup.mark(startup.WORKER_DATABASE)
        self.rotate(rotation)

    def rotate(self, rotation: Rotation, turns: int | None = None) -> None:
        """Give the worker's tests their slices in turn (forever, or `turns` times), and
        report the tests still valid to the hub after each."""
        done = 0
        while turns is None or done < turns:
            done += 1
            nodeids: Sequence[str] = list(self.shared_state["hub_state"]["nodeids"])
            update_targets(self, nodeids)
            valid = set(map(id, self.valid_targets))
            target = rotation.pick([self.targets[n] for n in nodeids], partial(_in, valid))
            if target is None:
                time.sleep(IDLE_SECONDS)
            else:
                self._run_slice(rotation, target)
            worker_state = self.shared_state["worker_state"]
            worker_state["current_lifetime"] = time.perf_counter() - self.worker_start
            worker_state["valid_nodeids"] = [t.nodeid for t in self.valid_targets]

    def _run_slice(self, rotation: Rotation, target: Any) -> None:
        try:
            switch_to_target(self, target)
            rotation.run_slice(self._first_marked(target.run_one),
                               lambda: bool(target.has_found_failure))
        except FailedFatally:
            pass  # HypoFuzz saved the fatal error; the target is no longer valid
        except HitShrinkTimeoutError:
            # The shrink used up its slice; HypoFuzz raises this past its own shrink loop
            # (re-running the shrunk example afterwards). The failure is saved and the
            # target has failed: the rotation goes on with the worker's other tests.
            pass
        except _SKIPS:
            target.skipped_dynamically = True  # pytest.skip() inside the test
        self.shared_state["worker_state"]["nodeids"][target.nodeid] = {"behavior_rates": None}


    def _first_marked(self, run_one: Callable[[], None]) -> Callable[[], None]:
        """`run_one`, marking the end of the worker's start-up once its first example has
        run (or raised: a test that fails at once has had its example too)."""
        if self.first_example_done:
            return run_one

        def first() -> None:
            try:
                run_one()
            finally:
                if not self.first_example_done:
                    self.first_example_done = True
                    startup.mark(startup.FIRST_EXAMPLE)

        return first


_UNCACHED_COLLECT: Callable[..., Any] = hypofuzz_private.collect_tests
_COLLECTED: dict[tuple[str, ...], Any] = {}  # the hub's, which its forked workers inherit


def collect_once(args: Iterable[str], *, debug: bool = False) -> Any:
    """HypoFuzz's `collect_tests`, once per process tree: a worker forked from the hub,
    which has collected the same tests, takes the hub's targets instead of running pytest's
    collection again (its modules are the hub's anyway, imported before the fork), each
    with a random generator of its own, as its own collection would have given it."""
    key = tuple(args)
    if debug or key not in _COLLECTED:
        _COLLECTED[key] = _UNCACHED_COLLECT(key, debug=debug)
        return _COLLECTED[key]
    collected = _COLLECTED[key]
    for target in collected.fuzz_targets:
        target.random = Random()
    return collected


def flush_pending_writes(timeout: float = FLUSH_SECONDS) -> int:
    """Wait (bounded) until every background write queue of this process is written out;
    returns how many queues there were. HypoFuzz wraps the database in several."""
    queues = [o for o in gc.get_objects() if isinstance(o, BackgroundWriteDatabase)]
    for queue in queues:
        join_background_writes(queue, timeout)
    return len(queues)


def _flush_and_exit(signum: int, frame: Any) -> None:
    flush_pending_writes()
    os._exit(128 + signum)  # as the default action would, skipping the workers' cleanup


def _in(ids: set[int], target: Any) -> bool:
    return id(target) in ids


_shrink_seconds = MIN_SLICE_SECONDS  # set by the worker from its slice
_UNCUT_EXECUTE_ONCE: Callable[..., None] = hypofuzz_private.execute_once
_SHRINK_STARTED = "_harness_shrink_started"
_clock: Callable[[], float] = time.perf_counter


def cut_shrink_at_one_slice(self: Any, data: Any, **kwargs: Any) -> None:
    """`FuzzTarget._execute_once`, ending HypoFuzz's shrink once it has run a slice.

    HypoFuzz's shrink stops at `SHRINK_TIMEOUT` of the provider's elapsed time, which
    the shrink's own runs (run without the provider's observation) never add to, so it
    runs to its end and the worker's other tests wait. The error raised is the one
    HypoFuzz's shrink loop expects; the failure is saved by then."""
    _UNCUT_EXECUTE_ONCE(self, data, **kwargs)
    if self.provider.phase is not Phase.SHRINK:
        return
    started = self.__dict__.setdefault(_SHRINK_STARTED, _clock())
    if _clock() - started > _shrink_seconds:
        raise HitShrinkTimeoutError


def install() -> None:
    """Put HypoFuzz's hub and workers on the harness's schedule (once; idempotent)."""
    if getattr(FuzzWorkerHub, "_harness_scheduled", False):
        return
    replace_rebalance(rebalance)
    setattr(FuzzWorkerHub, "_harness_scheduled", True)  # noqa: B010
    replace_worker_class(SlicedWorker)  # what `_start_worker` makes
    replace_execute_once(cut_shrink_at_one_slice)
    replace_collect_tests(collect_once)  # the hub's
