"""Aiming at the mesh's own timers: the loop names when the timers armed now fall due, the
kit hands them to the harness in milliseconds, and the machine's `aim` step advances to
just before one, so the next step's work lands in the instant that timer fires."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from aio_minimesh import MiniAdapter

from invariants.adapter import FirstChooser
from invariants.aio import VirtualLoop
from invariants.dynamic.workload import Workload


def test_the_loop_names_each_future_due_instant_once_soonest_first() -> None:
    loop = VirtualLoop()
    for delay in (0.5, 0.002, 0.5, 0.0015):
        loop.call_later(delay, lambda: None)
    loop.call_later(0.3, lambda: None).cancel()  # a cancelled timer is no instant
    assert loop.due_instants_us() == [1_500, 2_000, 500_000]
    loop.advance(2)  # what fell due is gone
    assert loop.due_instants_us() == [500_000]


def test_the_kit_gives_them_in_whole_milliseconds() -> None:
    adapter = MiniAdapter(FirstChooser())
    for delay in (0.0015, 0.0019, 0.25):
        adapter.loop.call_later(delay, lambda: None)
    assert adapter.timers_due_ms() == [1, 250]


class _Recorder:
    def __init__(self, mesh: Any) -> None:
        self.mesh = mesh
        self.advanced: list[int] = []

    def advance(self, ms: int, schedule: list[int], ties: Any = ()) -> None:
        self.advanced.append(ms)
        self.mesh.advance(ms)


def test_aim_advances_to_a_hop_before_the_chosen_timer() -> None:
    adapter = MiniAdapter(FirstChooser())
    adapter.loop.call_later(0.040, lambda: None)
    adapter.loop.call_later(0.100, lambda: None)
    machine = _Recorder(adapter)
    Workload.aim(machine, timer=1, less_ms=2, schedule=[])  # type: ignore[arg-type]
    assert adapter.now_ms() == 98  # the 100 ms timer, less a 2 ms hop
    # Counted modulo the instants left ahead; 0 ms: in the timer's own instant.
    Workload.aim(machine, timer=3, less_ms=0, schedule=[])  # type: ignore[arg-type]
    assert adapter.now_ms() == 100
    # Negative control: with no timer ahead it is a plain 1 ms advance.
    Workload.aim(machine, timer=0, less_ms=1, schedule=[])  # type: ignore[arg-type]
    assert machine.advanced[-1] == 1 and adapter.now_ms() == 101


def test_aimed_work_lands_with_the_timer_as_a_tie() -> None:
    # A post one hop before a sleep armed long ago ends: both due together, a timer tie
    # whose order the chooser picks (FIFO: the older timer first).
    asked: list[str] = []

    class Asking:
        def choose(self, options: int, why: str) -> int:
            asked.append(why)
            return 0

    adapter = MiniAdapter(Asking())  # type: ignore[arg-type]
    log: list[str] = []
    adapter.loop.call_later(0.5, log.append, "cooldown over")  # armed at 0
    machine = SimpleNamespace(mesh=adapter, advance=_Recorder(adapter).advance)
    Workload.aim(machine, timer=0, less_ms=1, schedule=[])  # type: ignore[arg-type]
    adapter.loop.call_later(0.001, log.append, "post landed")  # the post's 1 ms hop
    adapter.advance(1)
    assert log == ["cooldown over", "post landed"]
    assert any(why.startswith("timer tie at t=500 ms") for why in asked)


def test_the_mesh_hop_is_read_off_its_trace(monkeypatch: pytest.MonkeyPatch) -> None:
    import aio_minimesh

    from invariants.adapter import MessageSpec, Route

    monkeypatch.setattr(aio_minimesh, "HOP_S", 0.004)  # a 4 ms hop
    adapter = MiniAdapter(FirstChooser())
    adapter.create_hub("h0")
    machine = SimpleNamespace(mesh=adapter, _routed={}, _hop_ms=None)
    assert Workload.hop_ms(machine) == 1  # type: ignore[arg-type]  # none seen yet
    delivery = adapter.post("client", "h0", MessageSpec("Request"), route=Route.MONOLITH)
    machine._routed[delivery] = adapter.now_ms()
    adapter.advance(10)
    assert Workload.hop_ms(machine) == 4  # type: ignore[arg-type]
    assert not machine._routed  # learnt once, then not looked for


def test_aim_counts_the_mesh_hops_too() -> None:
    adapter = MiniAdapter(FirstChooser())
    adapter.loop.call_later(0.100, lambda: None)
    machine = _Recorder(adapter)
    machine.hop_ms = lambda: 3  # type: ignore[attr-defined]
    Workload.aim(machine, timer=0, less_ms=1, schedule=[], hops=2)  # type: ignore[arg-type]
    assert adapter.now_ms() == 100 - 1 - 2 * 3


def test_the_hop_is_read_from_a_refused_call_s_last_attempt(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # A refused grain call is re-sent after a 250 ms backoff: its travel is from the last
    # attempt (none, on this mesh, whose grain calls land in their instant), not from the
    # post, which would take the backoff for a hop.
    import aio_minimesh

    from invariants.adapter import Fault, FaultKind, MessageSpec, Route

    monkeypatch.setattr(aio_minimesh, "HOP_S", 0.004)
    adapter = MiniAdapter(FirstChooser())
    adapter.create_hub("h0")
    adapter.inject(Fault(FaultKind.REJECT_NEXT, "h0"))
    machine = SimpleNamespace(mesh=adapter, _routed={}, _hop_ms=None)
    refused = adapter.post("client", "h0", MessageSpec("Request"), route=Route.GRAIN)
    machine._routed[refused] = adapter.now_ms()
    adapter.advance(1_000)
    assert Workload.hop_ms(machine) == 1  # type: ignore[arg-type]  # not 250: none seen yet
    routed = adapter.post("client", "h0", MessageSpec("Request"), route=Route.MONOLITH)
    machine._routed[routed] = adapter.now_ms()
    adapter.advance(10)
    assert Workload.hop_ms(machine) == 4  # type: ignore[arg-type]
