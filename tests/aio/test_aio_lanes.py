"""Lane legality: what one step scheduled runs in its order, unless reorder-all is asked."""

from __future__ import annotations

import asyncio

from invariants.adapter import SeededChooser
from invariants.aio import Legality, run


async def three_lanes(log: list[str]) -> None:
    """Three steps each schedule four callbacks at once (three lanes of four), plus a task
    yielding in between: within a lane asyncio promises call order."""
    loop = asyncio.get_running_loop()
    done = loop.create_future()
    left = [12]

    def note(lane: str, i: int) -> None:
        log.append(f"{lane}{i}")
        left[0] -= 1
        if left[0] == 0:
            done.set_result(None)

    def schedule(lane: str) -> None:
        for i in range(4):
            loop.call_soon(note, lane, i)

    async def yielder() -> None:
        for _ in range(6):
            log.append("y")
            await asyncio.sleep(0)

    for lane in "pqr":
        loop.call_soon(schedule, lane)  # one lane of three: p, q, r schedule in order
    task = asyncio.create_task(yielder())
    await done
    await task


def _lane_order_kept(log: list[str]) -> bool:
    for lane in "pqr":
        seen = [int(entry[1]) for entry in log if entry[0] == lane]
        if seen != sorted(seen):
            return False
    return True


def _interleaved(log: list[str]) -> bool:
    lanes = [entry[0] for entry in log if entry != "y"]
    return lanes != sorted(lanes)


def test_within_a_lane_the_order_holds_under_every_seed() -> None:
    interleavings = 0
    for seed in range(60):
        log: list[str] = []
        run(three_lanes(log), chooser=SeededChooser(seed))
        assert _lane_order_kept(log), (seed, log)
        interleavings += _interleaved(log)
    # The lanes themselves were interleaved (the choice was real).
    assert interleavings > 10


def test_reorder_all_breaks_the_lane_order() -> None:
    broken = 0
    for seed in range(60):
        log: list[str] = []
        run(three_lanes(log), chooser=SeededChooser(seed), legality=Legality.REORDER_ALL)
        assert sorted(log) == sorted(
            [f"{lane}{i}" for lane in "pqr" for i in range(4)] + ["y"] * 6
        )
        broken += not _lane_order_kept(log)
    assert broken > 10
