"""Small asyncio programs with known ties, run on the virtual loop by tests/aio.

Run as a script (`python aio_programs.py PROGRAM CHOOSER [REPLAY_FILE]`), it prints one
JSON line: the program's output, the schedule and its rendering, for the subprocess tests
of determinism across processes and hash seeds.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from invariants.adapter import Chooser, FirstChooser, SeededChooser  # noqa: E402
from invariants.aio import Schedule, render_schedule, run  # noqa: E402


class ScriptChooser:
    """Takes its picks from `script` (modulo the options), then 0; records every question."""

    def __init__(self, script: Sequence[int] = ()) -> None:
        self.script = list(script)
        self.asked: list[tuple[int, str]] = []

    def choose(self, options: int, why: str) -> int:
        self.asked.append((options, why))
        return self.script.pop(0) % options if self.script else 0


class LastChooser:
    """Always the last option: as far from FIFO as a chooser gets."""

    def choose(self, options: int, why: str) -> int:
        return options - 1


async def same_instant(log: list[str]) -> None:
    """Three workers whose timers fall due at the same instants (a tie at 10 ms and 20 ms),
    each step logged with the virtual time."""
    loop = asyncio.get_running_loop()

    async def worker(name: str) -> None:
        for _ in range(2):
            await asyncio.sleep(0.010)
            log.append(f"{name}@{loop.time():.3f}")

    await asyncio.gather(*(asyncio.create_task(worker(n), name=n) for n in "abc"))


async def crossing(log: list[str]) -> None:
    """Three workers whose chains cross at 30 ms: each armed its last timer at another
    instant (0, 10 and 20 ms), so their wake-ups are a three-way timer tie."""
    loop = asyncio.get_running_loop()

    async def worker(name: str, *sleeps: float) -> None:
        for seconds in sleeps:
            await asyncio.sleep(seconds)
        log.append(f"{name}@{loop.time():.3f}")

    await asyncio.gather(
        asyncio.create_task(worker("a", 0.030), name="a"),
        asyncio.create_task(worker("b", 0.010, 0.020), name="b"),
        asyncio.create_task(worker("c", 0.020, 0.010), name="c"),
    )


async def chains_meet(log: list[str]) -> None:
    """Two chains of work meeting: a 20 ms sleep armed at 0 and a 10 ms one armed at 10 ms,
    both due at 20 ms (a cooldown ending as a leg lands), each wake-up logged."""
    async def sleeper(name: str, *sleeps: float) -> None:
        for seconds in sleeps:
            await asyncio.sleep(seconds)
        log.append(name)

    await asyncio.gather(asyncio.create_task(sleeper("cooldown", 0.020)),
                         asyncio.create_task(sleeper("leg", 0.010, 0.010)))


async def reply_or_timeout(log: list[str]) -> None:
    """A reply due at 100 ms, sent back at 50 ms over a 50 ms hop, against an
    `asyncio.timeout(0.1)` armed at 0: a timer tie the chooser settles (the race production
    meets when a reply lands on its deadline)."""
    loop = asyncio.get_running_loop()
    reply: asyncio.Future[str] = loop.create_future()

    def answer() -> None:
        if not reply.done():
            reply.set_result("reply")

    loop.call_later(0.05, loop.call_later, 0.05, answer)
    try:
        async with asyncio.timeout(0.1):
            log.append(await reply)
    except TimeoutError:
        # "lost reply": the reply was delivered, and the timeout still won.
        log.append("lost reply" if reply.done() and not reply.cancelled() else "timeout")


async def replies_on_two_deadlines(log: list[str]) -> None:
    """`reply_or_timeout` twice, one after the other: a tie at 100 ms, another at 200 ms."""
    await reply_or_timeout(log)
    await reply_or_timeout(log)


async def ping_pong(log: list[str]) -> None:
    """Tasks passing tokens over queues and yielding with sleep(0): no timers at all."""
    queues = [asyncio.Queue[int]() for _ in range(3)]

    async def node(i: int) -> None:
        for _ in range(4):
            token = await queues[i].get()
            log.append(f"n{i}:{token}")
            await asyncio.sleep(0)
            queues[(i + 1) % 3].put_nowait(token + 1)

    tasks = [asyncio.create_task(node(i)) for i in range(3)]
    queues[0].put_nowait(0)
    queues[1].put_nowait(100)
    await asyncio.gather(*tasks)


async def hash_ordered(log: list[str]) -> None:
    """Spawns workers in the iteration order of a set of strings: that order depends on
    PYTHONHASHSEED, so the schedule does too (a determinism leak in the program)."""
    names = {"alpha", "bravo", "charlie", "delta", "echo", "foxtrot"}
    loop = asyncio.get_running_loop()

    async def worker(name: str) -> None:
        await asyncio.sleep(0.005)
        log.append(f"{name}@{loop.time():.3f}")

    await asyncio.gather(*(asyncio.create_task(worker(n), name=n) for n in names))


async def mixed(log: list[str]) -> None:
    """Everything at once: the same-instant and crossing workers, the reply race and the
    ping-pong."""
    await asyncio.gather(same_instant(log), crossing(log), reply_or_timeout(log),
                         ping_pong(log))


PROGRAMS: dict[str, Callable[[list[str]], Coroutine[Any, Any, None]]] = {
    "same_instant": same_instant,
    "crossing": crossing,
    "reply_or_timeout": reply_or_timeout,
    "ping_pong": ping_pong,
    "hash_ordered": hash_ordered,
    "mixed": mixed,
}


def chooser_named(spec: str) -> Chooser:
    if spec == "first":
        return FirstChooser()
    if spec == "last":
        return LastChooser()
    return SeededChooser(int(spec.removeprefix("seed")))


def run_program(
    name: str, chooser: Chooser | None = None, replay: Schedule | None = None,
) -> tuple[list[str], Schedule]:
    log: list[str] = []
    result = run(PROGRAMS[name](log), chooser=chooser, replay=replay)
    return log, result.schedule


def main(argv: Sequence[str]) -> None:
    name, spec = argv[0], argv[1]
    replay = Schedule.loads(Path(argv[2]).read_text()) if len(argv) > 2 else None
    log, schedule = run_program(name, chooser_named(spec), replay)
    print(json.dumps({
        "log": log, "schedule": schedule.dumps(), "rendered": render_schedule(schedule),
    }))


if __name__ == "__main__":
    main(sys.argv[1:])
