"""A hung mesh never passes: a step past its budget ends as `MeshHung` naming the step, the
task and the frame, even where the budget's error lands inside a task (which would keep it
as its result and let the loop carry on), in the harness's runs and in the conformance
programs alike. And a `run` whose awaited work cannot finish while timers keep firing
ends at its virtual-time limit with the `Stuck` report."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Iterator
from typing import Any

import pytest
from aio_minimesh import Hub, MiniAdapter

from invariants.adapter import Chooser, FirstChooser
from invariants.adapter_calls import MeshHung
from invariants.aio import Stuck, VirtualLoop, run
from invariants.conformance.programs import conformance
from invariants.dynamic.runner import run_program
from invariants.dynamic.seed_programs import SEED_PROGRAMS
from invariants.step_budget import STEP_BUDGET_ENV, STEP_WALL_BUDGET_ENV, within_budget

PROGRAM = SEED_PROGRAMS["INV1"]["rejection"]  # hubs, three posts, then an advance
# A wall-clock budget no CPU budget test meets first, however loaded the machine: by
# default it is 6 times the CPU budget, and a process given a sixth of a core reaches that
# before 0.3 CPU seconds.
_LOADED = "120"


async def _spin() -> None:
    while True:
        pass


async def _main_beside(coro: Coroutine[Any, Any, None] | None) -> str:
    loop = asyncio.get_running_loop()
    task = None if coro is None else loop.create_task(coro, name="spinner")
    await asyncio.sleep(1)
    del task
    return "done"


def test_a_task_spinning_in_a_step_is_a_hang_naming_the_task_and_frame(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(STEP_BUDGET_ENV, "0.3")
    monkeypatch.setenv(STEP_WALL_BUDGET_ENV, _LOADED)
    loop = VirtualLoop()
    with pytest.raises(MeshHung) as raised, within_budget("step 'advance' at 0 ms"):
        loop.run_until_complete(_main_beside(_spin()))
    message = str(raised.value)
    assert message.startswith("step 'advance' at 0 ms did not return within 0.3 CPU seconds")
    assert "in task 'spinner', at _spin (" in message and "test_aio_hung_mesh.py:" in message
    # Negative control: the same step without the spinning task returns its result.
    with within_budget("step 'advance' at 0 ms"):
        assert VirtualLoop().run_until_complete(_main_beside(None)) == "done"


def test_a_hang_swallowed_by_the_mesh_is_still_a_hang(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def stubborn() -> str:
        try:
            while True:
                pass
        except BaseException:
            return "swallowed"

    monkeypatch.setenv(STEP_BUDGET_ENV, "0.3")
    monkeypatch.setenv(STEP_WALL_BUDGET_ENV, _LOADED)
    with pytest.raises(MeshHung, match="hung at stubborn"), within_budget("step"):
        stubborn()


_HELD = threading.Lock()


async def _blocked() -> None:
    with _HELD:  # held by the test: the loop thread blocks, using no CPU
        pass


def test_a_task_blocking_the_loop_thread_is_a_hang_within_the_wall_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(STEP_WALL_BUDGET_ENV, "0.5")
    with _HELD, pytest.raises(MeshHung) as raised, within_budget("step 'advance' at 0 ms"):
        VirtualLoop().run_until_complete(_main_beside(_blocked()))
    message = str(raised.value)
    assert "of wall-clock time: the mesh hung, blocked in task 'spinner', at _blocked (" in message


class _SpinningHub(Hub):
    async def pump(self) -> None:
        await asyncio.sleep(0.001)  # up and waiting, then stuck computing
        while True:
            pass


class _SpinningAdapter(MiniAdapter):
    def create_hub(self, address: str, *, watermark: int | None = None) -> None:
        hub = self.mesh.hubs[address] = _SpinningHub(address, watermark or 100)
        self.spawn(hub.pump(), name=f"hub {address}")


def _spinning(chooser: Chooser) -> MiniAdapter:
    return _SpinningAdapter(chooser)


@pytest.fixture
def short_budget(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv(STEP_BUDGET_ENV, "0.3")
    monkeypatch.setenv(STEP_WALL_BUDGET_ENV, _LOADED)
    yield


@pytest.mark.usefixtures("short_budget")
def test_a_hung_kit_mesh_fails_the_harness_run_and_conformance() -> None:
    outcome = run_program("INV1", _spinning, PROGRAM, name="rejection")
    assert outcome.verdict == "error"
    assert outcome.failure_text is not None
    assert "MeshHung: " in outcome.failure_text
    assert "the mesh hung in task 'hub " in outcome.failure_text
    with pytest.raises(MeshHung, match=r"conformance program .* the mesh hung in task"):
        conformance(_spinning, None)
    # Negative control: the mesh it is built on passes the same program.
    assert run_program("INV1", MiniAdapter, PROGRAM, name="rejection").verdict == "pass"


async def _waits_beside_a_heartbeat(hours: float) -> str:
    async def heartbeat() -> None:
        while True:
            await asyncio.sleep(1)

    asyncio.get_running_loop().create_task(heartbeat(), name="heartbeat")
    await asyncio.sleep(hours * 3600)
    return "woke"


def test_a_run_ends_at_its_time_limit_with_the_stuck_report() -> None:
    with pytest.raises(Stuck) as raised:
        run(_waits_beside_a_heartbeat(2.0))  # the default limit: one virtual hour
    message = str(raised.value)
    assert message.startswith("stuck at t=3600000 ms after ")
    assert "unfinished after the time limit of 3600000 ms of virtual time" in message
    assert "heartbeat: waits in _waits_beside_a_heartbeat.<locals>.heartbeat()" in message
    # Negative controls: within the limit, and with the limit raised, the run finishes.
    assert run(_waits_beside_a_heartbeat(0.5)).result == "woke"
    assert run(_waits_beside_a_heartbeat(2.0), time_limit=3 * 3600).result == "woke"


@pytest.mark.parametrize("limit", [0, -1, float("inf"), float("nan"), "1", True])
def test_a_time_limit_that_is_not_a_positive_number_is_refused(limit: object) -> None:
    with pytest.raises(ValueError, match="time_limit must be a positive number of seconds"):
        VirtualLoop(time_limit=limit)  # type: ignore[arg-type]


def _one_iteration(loop: asyncio.AbstractEventLoop) -> list[str]:
    """`stop()` before `run_forever()`: one iteration runs, as asyncio documents."""
    log: list[str] = []

    def first() -> None:
        log.append("first")
        loop.call_soon(log.append, "next iteration")

    loop.call_soon(first)
    loop.call_soon(log.append, "second")
    loop.stop()
    loop.run_forever()
    return log


def test_stop_ends_the_loop_after_the_iteration_as_on_the_stock_loop() -> None:
    stock = asyncio.new_event_loop()
    try:
        expected = _one_iteration(stock)
    finally:
        stock.close()
    assert expected == ["first", "second"]
    assert _one_iteration(VirtualLoop(FirstChooser())) == expected


def test_debug_mode_warns_of_a_slow_callback(caplog: pytest.LogCaptureFixture) -> None:
    def slow() -> None:
        total = 0
        for i in range(20_000):
            total += i

    for debug in (True, False):
        caplog.clear()
        loop = VirtualLoop()
        loop.set_debug(debug)
        loop.slow_callback_duration = 0.0
        loop.call_soon(slow)
        loop.run_until_idle(0)
        warned = [r for r in caplog.records if r.getMessage().startswith("Executing ")]
        assert bool(warned) is debug  # negative control: no warning out of debug mode
