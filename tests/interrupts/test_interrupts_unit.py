"""The mechanism under every command's signals: what a signal raises, where Python would lose
it, cleanup that holds it, and a run that never judges what an interrupt cut short.

Each signal here is raised by the test itself (`signal.raise_signal`), so where it is
handled is known; a `time.sleep` after it only waits for a signal delivered again, which
ends it at once (the sleep's length is a bound on a failure, never a threshold).
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal
import time
from concurrent.futures import ProcessPoolExecutor
from types import SimpleNamespace
from typing import Any

import pytest

from invariants import interrupts
from invariants.dynamic.plans import machine_class
from invariants.dynamic.runner import run_invariant, run_program
from invariants.dynamic.seed_programs import SEED_PROGRAMS
from invariants.interrupts import Terminated
from invariants.mutants.score.session import _verdict, interrupted_line
from reference_impl.adapter import ReferenceAdapter

WAIT_FOR_REDELIVERY = 60.0  # a bound: the signal delivered again ends the sleep at once


def test_a_termination_is_an_interrupt_and_never_a_test_outcome() -> None:
    term, hup = Terminated(signal.SIGTERM), Terminated(signal.SIGHUP)
    assert isinstance(term, KeyboardInterrupt)
    assert not isinstance(term, Exception | SystemExit)  # Hypothesis would shrink those
    assert [interrupts.exit_code(e) for e in (KeyboardInterrupt(), term, hup)] == [130, 143, 129]
    assert [interrupts.name_of(e) for e in (KeyboardInterrupt(), term)] == ["SIGINT", "SIGTERM"]


@pytest.mark.parametrize(("signum", "raised"), [(signal.SIGINT, KeyboardInterrupt),
                                                 (signal.SIGTERM, Terminated),
                                                 (signal.SIGHUP, Terminated)])
def test_each_signal_raises_its_interrupt_and_is_kept(
    signum: signal.Signals, raised: type[BaseException]
) -> None:
    with interrupts.handled():
        with pytest.raises(raised) as caught:
            signal.raise_signal(signum)
            time.sleep(WAIT_FOR_REDELIVERY)
        assert interrupts.received() == signum
        assert interrupts.signal_of(caught.value) == signum
    assert interrupts.received() is None  # forgotten with the handlers
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL


def _inside_the_callback() -> None:
    """A call: the pending signal is handled on entering it, inside the gc callback."""


def test_a_signal_handled_in_a_gc_callback_is_raised_once_outside_it() -> None:
    # Hypothesis's gc callback is where a Ctrl-C in an allocation-heavy step was handled,
    # raised, printed as "ignored" and lost, so that `check` went on to "Result: PASS".
    ran: list[str] = []

    def callback(phase: str, _info: dict[str, Any]) -> None:
        if phase == "start" and not ran:
            ran.append("signalled")
            signal.raise_signal(signal.SIGINT)
            _inside_the_callback()
            ran.append("returned")

    lost: list[object] = []
    with interrupts.handled():
        gc.callbacks.append(callback)
        try:
            with pytest.raises(KeyboardInterrupt) as caught:
                gc.collect()
                lost.append("collected")
                time.sleep(WAIT_FOR_REDELIVERY)
        finally:
            gc.callbacks.remove(callback)
    assert ran == ["signalled", "returned"]  # the callback ran to its end
    assert lost == ["collected"]
    assert "callback" not in {frame.name for frame in caught.traceback}


class _Finalised:
    def __del__(self) -> None:
        raise KeyboardInterrupt  # where Python can only print it as "ignored"


def test_an_interrupt_lost_in_a_finaliser_is_delivered_again() -> None:
    with interrupts.handled(), pytest.raises(KeyboardInterrupt):
        finalised = _Finalised()
        del finalised
        time.sleep(WAIT_FOR_REDELIVERY)


def test_cleanup_holds_a_signal_until_it_is_done() -> None:
    done: list[str] = []
    with interrupts.handled(), pytest.raises(Terminated):
        with interrupts.deferred():
            signal.raise_signal(signal.SIGTERM)
            _inside_the_callback()
            done.append("cleaned up")
        done.append("not reached")
    assert done == ["cleaned up"]


class _Interrupted(ReferenceAdapter):
    """Ctrl-C in the middle of a step: the signal arrives while `advance` runs."""

    idle_runs = 0

    def advance(self, ms: int) -> None:
        signal.raise_signal(signal.SIGINT)
        _inside_the_callback()  # handled here, as the terminal's would be
        super().advance(ms)

    def run_until_idle(self, limit_ms: int) -> bool:
        type(self).idle_runs += 1
        return super().run_until_idle(limit_ms)


def test_an_interrupted_step_is_not_judged_by_teardown() -> None:
    _Interrupted.idle_runs = 0
    program = SEED_PROGRAMS["INV1"]["rejection"]
    with interrupts.handled(), pytest.raises(KeyboardInterrupt):
        run_program("INV1", _Interrupted, program, name="rejection")
    assert _Interrupted.idle_runs == 0  # no liveness verdict on the half-done step
    # Through Hypothesis: no shrinking, no verdict.
    with interrupts.handled(), pytest.raises(KeyboardInterrupt):
        run_invariant("INV1", _Interrupted, "ci", seed_scenarios=False)
    assert _Interrupted.idle_runs == 0


class _Counting(ReferenceAdapter):
    idle_runs = 0

    def run_until_idle(self, limit_ms: int) -> bool:
        type(self).idle_runs += 1
        return super().run_until_idle(limit_ms)


def test_teardown_with_an_interrupt_on_its_way_up_only_cleans_up() -> None:
    machine = machine_class("INV1", _Counting)()
    for step, arguments in SEED_PROGRAMS["INV1"]["rejection"][:-1]:
        getattr(machine, step)(**arguments)
    _Counting.idle_runs = 0
    with pytest.raises(KeyboardInterrupt):
        try:
            raise KeyboardInterrupt  # between two steps, outside any of them
        finally:
            machine.teardown()
    assert _Counting.idle_runs == 0
    machine.teardown()  # with nothing in flight it judges, as ever
    assert _Counting.idle_runs == 1


def test_an_interrupted_in_place_run_is_no_kill_in_the_cosmic_ray_session() -> None:
    def result(output: str) -> SimpleNamespace:
        return SimpleNamespace(worker_outcome="normal", test_outcome="killed", output=output)

    assert _verdict(result(interrupted_line("SIGTERM") + "\n")) is None  # run it again
    verdict = _verdict(result("a mesh that exits the process\n"))
    assert verdict is not None and verdict.status == "killed"  # as before


def _block_on(reader: int) -> bytes:
    return os.read(reader, 1)  # nothing is ever written: the worker waits until stopped


def test_a_stopped_pool_leaves_no_worker_and_no_manager_thread() -> None:
    """What ends a pool cut short also ends its manager thread: left running, it would race
    the interpreter's exit hook writing to the pipe it closes (an "ignored" traceback)."""
    reader, writer = os.pipe()
    try:
        pool = ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("fork"))
        futures = [pool.submit(_block_on, reader) for _ in range(3)]
        processes = list(pool._processes.values())
        manager = pool._executor_manager_thread  # the pool drops it as it shuts down
        assert manager is not None and manager.is_alive()
        interrupts.stop_pool(pool)
        assert [p.is_alive() for p in processes] == [False, False]
        assert not manager.is_alive()
        assert all(f.done() for f in futures)  # cancelled or broken: none left pending
    finally:
        os.close(reader)
        os.close(writer)
