"""The kit: the adapter base over the loop, the trace shim, fault points and helpers."""

from __future__ import annotations

import asyncio
import dataclasses
import typing

import pytest
from aio_minimesh import Delivery, MiniAdapter, MiniMesh, make
from aio_programs import LastChooser

from invariants.adapter import (
    Capability,
    Fault,
    FaultKind,
    FirstChooser,
    MeshAdapter,
    MessageSpec,
    Route,
)
from invariants.aio import AsyncMeshAdapter, emit, point, receiving, removed, sending, turn
from invariants.aio.tracelog import TraceFields
from invariants.capabilities import capabilities_of
from invariants.checks import CheckParams
from invariants.conformance.programs import conformance
from invariants.trace import EventKind, MessageClass, TraceEvent


def _kinds(adapter: MeshAdapter) -> list[EventKind]:
    return [event.kind for event in adapter.trace()]


def test_the_shim_has_one_call_per_event_kind_and_every_field() -> None:
    for kind in EventKind:
        assert callable(getattr(emit, kind.value)), kind
    stamped = {"seq", "time_ms", "kind"}
    own = {"custom", "data"}  # a custom event's, given to `emit.custom` as its name and fields
    assert set(typing.get_type_hints(TraceFields)) == {
        f.name for f in dataclasses.fields(TraceEvent)
    } - stamped - own


def test_the_shim_is_a_no_op_outside_the_harness() -> None:
    assert emit.posted(hub="alpha") is None  # no loop at all

    async def on_a_stock_loop() -> TraceEvent | None:
        return emit.posted(hub="alpha")

    assert asyncio.run(on_a_stock_loop()) is None

    async def calls_a_point() -> Fault | None:
        return await point("beta")

    assert asyncio.run(calls_a_point()) is None
    assert removed("beta") is False


def test_the_shim_stamps_seq_and_virtual_time_under_the_adapter() -> None:
    adapter = MiniAdapter(FirstChooser())

    async def later() -> None:
        await asyncio.sleep(0.25)
        emit.stop_completed(hub="silo")

    with adapter.active():
        emit.hub_created(hub="a")  # synchronous mesh code, outside the loop
    adapter.spawn(later())
    adapter.advance(1000)
    assert [(e.seq, e.time_ms, e.kind) for e in adapter.trace()] == [
        (0, 0, EventKind.HUB_CREATED), (1, 250, EventKind.STOP_COMPLETED),
    ]


def test_a_custom_event_is_stamped_as_every_event_and_checked() -> None:
    adapter = MiniAdapter(FirstChooser())

    async def turn() -> None:
        await asyncio.sleep(0.5)
        emit.custom("mini.turn_ended", hub="a", took_ms=0)

    assert emit.custom("mini.turn_ended") is None  # outside the harness: a no-op
    adapter.emit_custom("mini.turn_started", hub="a")
    adapter.spawn(turn())
    adapter.advance(1000)
    assert [(e.seq, e.time_ms, e.custom, e.value("took_ms")) for e in adapter.trace()] == [
        (0, 0, "mini.turn_started", None), (1, 500, "mini.turn_ended", 0),
    ]
    with pytest.raises(ValueError, match=r"custom event 'Mini': expected 'namespace\.kind'"):
        adapter.emit_custom("Mini")
    # Negative control: outside `active()` and the loop, the same call records nothing.
    assert emit.hub_created(hub="b") is None
    assert len(adapter.trace()) == 2


def test_the_adapter_keeps_the_protocol() -> None:
    adapter = make(FirstChooser())
    assert isinstance(adapter, MeshAdapter)
    # What it names, and the timer ties every kit adapter's loop marks.
    assert capabilities_of(adapter) == {Capability.GRAIN_ROUTER, Capability.TIMER_TIES}
    with pytest.raises(NotImplementedError, match="MiniAdapter must implement subscribe"):
        adapter.subscribe("a", "b")
    with pytest.raises(ValueError):
        adapter.advance(-1)


def test_post_then_advance() -> None:
    adapter = make(FirstChooser())
    adapter.create_hub("alpha")
    did = adapter.post("client", "alpha", MessageSpec("Request"), route=Route.DIRECT)
    assert _kinds(adapter) == [EventKind.HUB_CREATED]  # nothing ran yet
    adapter.advance(0)
    assert _kinds(adapter) == [
        EventKind.HUB_CREATED, EventKind.POSTED, EventKind.ENQUEUED, EventKind.HANDLED,
    ]
    assert adapter.trace()[1].delivery_id == did
    assert adapter.now_ms() == 0


def test_two_posts_are_independent_lanes() -> None:
    orders = []
    for chooser in (FirstChooser(), LastChooser()):
        adapter = make(chooser)
        adapter.create_hub("alpha")
        first = adapter.post("one", "alpha", MessageSpec("Request"), route=Route.DIRECT)
        second = adapter.post("two", "alpha", MessageSpec("Request"), route=Route.DIRECT)
        adapter.advance(0)
        handled = [e.delivery_id for e in adapter.trace() if e.kind is EventKind.HANDLED]
        orders.append(handled)
        assert sorted(handled) == sorted([first, second])
    assert orders[0] != orders[1]


def test_the_clock_moves_as_the_protocol_says() -> None:
    adapter = make(FirstChooser())
    adapter.create_hub("alpha")
    adapter.post("client", "alpha", MessageSpec("Request"))  # a 1 ms hop
    adapter.advance(7)
    assert adapter.now_ms() == 7
    adapter.post("client", "alpha", MessageSpec("Request"))
    assert adapter.run_until_idle(60_000) is True
    assert adapter.now_ms() == 8  # the hop's end, not the limit


def _calls(adapter: AsyncMeshAdapter, target: str, count: int) -> list[FaultKind | None]:
    seen: list[FaultKind | None] = []

    async def calls() -> None:
        for _ in range(count):
            fault = await point(target)
            seen.append(None if fault is None else fault.kind)

    adapter.spawn(calls())
    adapter.run_until_idle(60_000)
    return seen


def test_call_faults_are_spent_in_call_order() -> None:
    adapter = make(FirstChooser())
    adapter.inject(Fault(FaultKind.TIMEOUT_NEXT, "beta"))
    adapter.inject(Fault(FaultKind.AGGREGATE_NEXT, "beta"))
    adapter.inject(Fault(FaultKind.REJECT_NEXT, "beta", count=2))
    adapter.inject(Fault(FaultKind.REJECT_NEXT, "gamma"))
    # Rejections first (they are spent before a call reaches the callee), then the
    # aggregate before the bare timeout, then nothing; gamma's fault stays gamma's.
    assert _calls(adapter, "beta", 5) == [
        FaultKind.REJECT_NEXT, FaultKind.REJECT_NEXT, FaultKind.AGGREGATE_NEXT,
        FaultKind.TIMEOUT_NEXT, None,
    ]
    assert adapter.rig.faults.armed(FaultKind.REJECT_NEXT, "gamma") == 1
    assert [(e.kind, e.reason, e.target) for e in adapter.trace()][:2] == [
        (EventKind.FAULT_INJECTED, "timeout_next", "beta"),
        (EventKind.FAULT_INJECTED, "aggregate_next", "beta"),
    ]


def test_a_slow_destination_makes_each_call_take_its_time() -> None:
    adapter = make(FirstChooser())
    adapter.inject(Fault(FaultKind.SLOW_DESTINATION, "beta", duration_ms=500))
    assert _calls(adapter, "beta", 2) == [None, None]
    assert adapter.now_ms() == 1000
    # Negative control: another target is not slowed.
    before = adapter.now_ms()
    assert _calls(adapter, "gamma", 2) == [None, None]
    assert adapter.now_ms() == before


def test_a_removed_target_is_removed() -> None:
    adapter = make(FirstChooser())
    adapter.inject(Fault(FaultKind.REMOVE_TARGET, "beta"))
    assert _calls(adapter, "beta", 1) == [FaultKind.REMOVE_TARGET]
    with adapter.active():
        assert removed("beta") and not removed("alpha")


def test_a_block_holds_the_turn_and_says_so() -> None:
    adapter = make(FirstChooser())
    adapter.create_hub("alpha")
    adapter.create_hub("beta")
    adapter.inject(Fault(FaultKind.BLOCK_HUB, "alpha", duration_ms=1000))
    adapter.advance(400)
    adapter.inject(Fault(FaultKind.BLOCK_HUB, "alpha", duration_ms=1000))  # extends to 1400
    adapter.inject(Fault(FaultKind.BLOCK_HUB, "nowhere", duration_ms=1000))
    for hub in ("alpha", "beta"):
        adapter.post("client", hub, MessageSpec("Request"), route=Route.DIRECT)
    assert adapter.run_until_idle(60_000) is True
    turns = [(e.time_ms, e.kind.name, e.hub) for e in adapter.trace()
             if e.kind in (EventKind.TURN_BLOCKED, EventKind.TURN_RELEASED, EventKind.HANDLED)]
    assert turns == [
        (0, "TURN_BLOCKED", "alpha"),
        (400, "HANDLED", "beta"),  # negative control: beta was never held
        (1400, "TURN_RELEASED", "alpha"),
        (1400, "HANDLED", "alpha"),
    ]


def test_turn_waits_for_each_waiter_alone() -> None:
    adapter = make(FirstChooser())
    adapter.inject(Fault(FaultKind.BLOCK_HUB, "alpha", duration_ms=100))
    done: list[str] = []

    async def waiter(name: str) -> None:
        await turn("alpha")
        done.append(name)

    first = adapter.spawn(waiter("first"))
    adapter.spawn(waiter("second"))
    adapter.advance(10)
    first.cancel()  # one waiter given up does not release the others
    adapter.run_until_idle(1000)
    assert done == ["second"]
    assert adapter.now_ms() == 100


def test_the_mini_mesh_runs_on_a_stock_loop_as_it_is() -> None:
    async def main() -> list[str]:
        mesh = MiniMesh()
        hub = mesh.add_hub("alpha")
        pump = asyncio.create_task(hub.pump())
        delivery = Delivery("d1", "client", "alpha", MessageSpec("Request"), "user")
        await mesh.grain_call(delivery)
        await asyncio.sleep(0)
        pump.cancel()
        return hub.handled

    assert asyncio.run(main()) == ["d1"]


def test_the_mini_mesh_conforms() -> None:
    # Its figures: three calls per grain delivery (two retries), not the default budget.
    declared, results = conformance(make, CheckParams(delivery_retries=2))
    assert declared == {Capability.GRAIN_ROUTER, Capability.TIMER_TIES}
    assert {r.program: r.broken for r in results} == {
        "intake": (), "schedule": (), "grain": (), "fault-order": (), "zero-count": (),
    }
    assert all(r.events for r in results)


def test_the_mini_mesh_held_to_the_default_budget_is_told_its_figure() -> None:
    _, results = conformance(make)
    [broken] = next(r.broken for r in results if r.program == "grain")
    assert "called 3 time(s), not 7" in broken.message
    assert "delivery_retries, 6" in broken.message


class _ForgetsEnqueued(MiniAdapter):
    def __init__(self, chooser: FirstChooser) -> None:
        super().__init__(chooser)
        self.mesh.offer = self._offer  # type: ignore[method-assign]

    def _offer(self, delivery: Delivery) -> None:
        hub = self.mesh.hubs.get(delivery.target)
        if hub is None:
            self.mesh.answer(delivery, "NotFound")
            return
        emit.posted(hub=hub.address, delivery_id=delivery.id, sender=delivery.sender)
        hub.queue.put_nowait(delivery)


def test_negative_control_a_mesh_that_forgets_enqueued_does_not_conform() -> None:
    _, results = conformance(lambda chooser: _ForgetsEnqueued(FirstChooser()))
    intake = next(r for r in results if r.program == "intake")
    assert any("never ENQUEUED" in b.message or "no intake outcome" in b.message
               for b in intake.broken)


def test_a_message_class_that_is_no_message_class_is_refused_as_it_is_emitted() -> None:
    adapter = MiniAdapter(FirstChooser())
    with adapter.active():
        emit.posted(hub="a", delivery_id="d1", message_class=MessageClass.USER)
        with pytest.raises(TypeError, match=r"^posted: message_class must be a MessageClass "
                                            r"\(MessageClass.USER, .*\), got 'user'$"):
            emit.posted(hub="a", delivery_id="d2", message_class="user")  # type: ignore[typeddict-item]
    assert [e.delivery_id for e in adapter.trace()] == ["d1"]


def test_a_call_that_travels_meets_its_rejection_as_it_leaves_and_its_slowdown_at_the_callee(
) -> None:
    """`sending` then `receiving` where each happens: the caller's timeout runs through the
    slowdown, so a call slowed past it still reaches the callee, once, after the caller
    gave up. The control: `point` asked as the call leaves (the caller's timeout around
    it) times out before the call ever leaves."""
    def run(halves: bool) -> list[tuple[int, str]]:
        adapter = make(FirstChooser())
        adapter.inject(Fault(FaultKind.REJECT_NEXT, "beta"))
        adapter.inject(Fault(FaultKind.SLOW_DESTINATION, "beta", duration_ms=500))
        seen: list[tuple[int, str]] = []

        async def callee(n: int) -> None:
            fault = await receiving("beta")
            seen.append((adapter.now_ms(), f"call {n} received, {fault}"))

        async def caller(n: int) -> None:
            try:
                async with asyncio.timeout(0.3):
                    if halves:
                        fault = sending("beta")
                        if fault is not None:
                            seen.append((adapter.now_ms(), f"call {n} {fault.kind.value}"))
                            return
                        asyncio.get_running_loop().create_task(callee(n))  # it leaves
                        await asyncio.sleep(10)  # the reply never comes in time
                    else:
                        fault = await point("beta")
                        kind = None if fault is None else fault.kind.value
                        seen.append((adapter.now_ms(), f"call {n} left, {kind}"))
            except TimeoutError:
                seen.append((adapter.now_ms(), f"call {n} timed out"))

        async def calls() -> None:
            for n in (1, 2):
                await caller(n)

        adapter.spawn(calls())
        adapter.run_until_idle(60_000)
        return sorted(seen)

    assert run(halves=True) == [(0, "call 1 reject_next"), (300, "call 2 timed out"),
                                (500, "call 2 received, None")]
    assert run(halves=False) == [(0, "call 1 left, reject_next"), (300, "call 2 timed out")]
