"""The staged stop: refuse new work, hold for the legs in flight, then close."""

from __future__ import annotations

import asyncio

import pytest
from meshkit import gate, keeper, mesh, run, until

from nodemesh import CallFailed, DeliveryFailure, Phase, Settings, Stage
from nodemesh.observer import EventLog

STAGES = [("stage_entered", Stage.QUIESCE), ("stage_left", Stage.QUIESCE),
          ("stage_entered", Stage.DETACH), ("stage_left", Stage.DETACH),
          ("stage_entered", Stage.DISCONNECT), ("stage_left", Stage.DISCONNECT)]


def _stop_story(log: EventLog, node: str) -> list[object]:
    """What the stop of `node` did, in order: its stages, its hold and its legs' ends."""
    names = ("stop_asked", "stage_entered", "stage_left", "hold_began", "hold_ended",
             "left_behind", "leg_closed", "stopped")
    asked = next(i for i, e in enumerate(log.events)
                 if e.name == "stop_asked" and e["node"] == node)
    story: list[object] = []
    for e in log.events[asked:]:
        if e.name not in names or e["node"] != node:
            continue
        detail = e.fields.get("stage") or e.fields.get("reason") or e.fields.get("outcome")
        story.append((e.name, detail) if detail is not None else e.name)
    return story


def test_a_graceful_stop_holds_until_its_legs_land_and_refuses_new_work() -> None:
    async def go() -> None:
        async with mesh() as (m, log):
            release = gate(m["n2"], "slow")
            inbox = keeper(m["n1"], "alice")
            keeper(m["n2"], "bob")
            call = asyncio.create_task(m["n1"].call("n1/alice", "n2/slow", "Work"))
            await until(lambda: m["n1"].in_flight == 1)
            stop = asyncio.create_task(m["n1"].stop())
            await until(lambda: bool(log.named("hold_began")))
            assert m["n1"].phase is Phase.STOPPING
            refused = m["n1"].post("n1/alice", "n2/bob", "Hello")  # new work: refused
            with pytest.raises(CallFailed, match="ShuttingDown"):  # and so are its peers'
                await m["n2"].call("n2/bob", "n1/alice", "Hello")
            release.set()
            assert await call == "done"
            await stop
            assert DeliveryFailure.read(inbox[0]) == DeliveryFailure(refused, "ShuttingDown")
            assert [e["env"].id for e in log.named("dispatch_refused")] == [refused]
            story = _stop_story(log, "n1")
            assert story == ["stop_asked", STAGES[0], "hold_began", ("leg_closed", "landed"),
                             ("hold_ended", "drained"), *STAGES[1:], "stopped"]
    run(go())


def test_a_stop_with_nothing_in_flight_does_not_hold() -> None:
    async def go() -> None:
        async with mesh() as (m, log):
            await m["n1"].stop()
            assert _stop_story(log, "n1") == ["stop_asked", *STAGES, "stopped"]
    run(go())


def test_a_hold_ends_at_its_budget_naming_the_legs_left_behind_and_cuts_them() -> None:
    async def go() -> None:
        async with mesh(settings=Settings(stop_budget_ms=30, backoff_base_ms=1)) as (m, log):
            release = gate(m["n2"], "slow")
            calls = [asyncio.create_task(m["n1"].call("n1/a", "n2/slow", "Work", n))
                     for n in range(2)]
            await until(lambda: m["n1"].in_flight == 2)
            await m["n1"].stop()
            legs = [e["leg"] for e in log.named("leg_opened")]
            assert [e["leg"] for e in log.named("left_behind")] == legs  # oldest first
            assert _stop_story(log, "n1") == [
                "stop_asked", STAGES[0], "hold_began", "left_behind", "left_behind",
                ("hold_ended", "budget"), STAGES[1], STAGES[2],
                ("leg_closed", "cut"), ("leg_closed", "cut"), *STAGES[3:], "stopped"]
            for call in calls:
                with pytest.raises(CallFailed, match="Cut"):
                    await call
            release.set()
    run(go())


@pytest.mark.parametrize("give_up", [False, True])
def test_a_non_graceful_stop_holds_nothing_and_ends_a_hold_under_way(give_up: bool) -> None:
    async def go() -> None:
        async with mesh() as (m, log):
            release = gate(m["n2"], "slow")
            call = asyncio.create_task(m["n1"].call("n1/a", "n2/slow", "Work"))
            await until(lambda: m["n1"].in_flight == 1)
            if give_up:  # a graceful stop, then the host gives up on it
                stop = asyncio.create_task(m["n1"].stop())
                await until(lambda: bool(log.named("hold_began")))
            await m["n1"].stop(graceful=False)
            if give_up:
                await stop
            held = ["hold_began", ("hold_ended", "cancelled")] if give_up else []
            assert _stop_story(log, "n1") == [
                "stop_asked", STAGES[0], *held, STAGES[1], STAGES[2], ("leg_closed", "cut"),
                *STAGES[3:], "stopped"]
            with pytest.raises(CallFailed, match="Cut"):
                await call
            release.set()
    run(go())


def test_nothing_is_sent_after_the_stop_and_hubs_are_gated() -> None:
    async def go() -> None:
        async with mesh() as (m, log):
            keeper(m["n1"], "alice")
            await m["n1"].stop()
            stopped = len(log.events)
            m["n1"].post("n1/alice", "n2/bob", "Hello")
            local = m["n1"].post("n1/alice", "n1/alice", "Hello")
            with pytest.raises(CallFailed, match="ShuttingDown"):
                await m["n1"].call("n1/alice", "n2/bob", "Hello")
            after = [e.name for e in log.events[stopped:] if e["node"] == "n1"]
            assert "leg_opened" not in after and "failure_sent" not in after
            assert [e.name for e in log.about(local, "gated", "queued")] == ["gated"]
            assert not [e for e in log.events[stopped:] if e.name == "sent"]
    run(go())


def test_failure_answers_still_travel_while_the_stop_holds() -> None:
    async def go() -> None:
        async with mesh() as (m, log):
            release = gate(m["n2"], "slow")
            inbox = keeper(m["n2"], "bob")
            call = asyncio.create_task(m["n1"].call("n1/a", "n2/slow", "Work"))
            await until(lambda: m["n1"].in_flight == 1)
            stop = asyncio.create_task(m["n1"].stop())
            await until(lambda: bool(log.named("hold_began")))
            lost = m["n1"].post("n2/bob", "n1/nobody", "Hello")  # answered to n2, a leg
            await until(lambda: len(inbox) == 1)
            assert DeliveryFailure.read(inbox[0]) == DeliveryFailure(lost, "NotFound")
            assert [e["leg"].kind for e in log.named("leg_opened")] == ["call", "answer"]
            release.set()
            await call
            await stop
    run(go())
