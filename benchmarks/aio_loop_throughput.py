"""CPU cost of the virtual loop against asyncio's own, on three shapes of work.

    python benchmarks/aio_loop_throughput.py [--scale F] [--repeat N]

- **ping-pong**: two tasks pass a counter back and forth over two `asyncio.Queue`s until
  20,000 messages have crossed: a mesh's hub pumps, no timer in play;
- **tasks**: 10,000 tasks created at once, each awaiting one shared event, then set;
- **timers**: 100,000 timers (`call_later`) spread over one second, each counting.

Measured in one run, interleaved, best of `--repeat` (CPU time, `time.process_time`, so
other processes disturb it less; the stock loop sleeps in its selector between timers,
which costs no CPU): the stock event loop (`asyncio.new_event_loop()`) and
`invariants.aio.VirtualLoop` with `FirstChooser`, the way the harness runs it (the step
budget off). Reported side by side as CPU seconds and the ratio virtual/stock; goals:
ping-pong at most 1.0 (as fast as stock or faster), tasks and timers at most 1.5.
`--scale` multiplies every size (0.1 for a quick look).

A script, not a test: timings depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from invariants.adapter import FirstChooser
from invariants.aio import VirtualLoop


async def ping_pong(messages: int) -> int:
    """Both tasks run until `messages` messages crossed; returns the last one."""
    there: asyncio.Queue[int] = asyncio.Queue()
    back: asyncio.Queue[int] = asyncio.Queue()

    async def ping() -> int:
        count = 0
        while count < messages:
            there.put_nowait(count + 1)
            count = await back.get()
        there.put_nowait(-1)
        return count

    async def pong() -> None:
        while True:
            count = await there.get()
            if count < 0:
                return
            back.put_nowait(count + 1)

    pinger = asyncio.create_task(ping())
    ponger = asyncio.create_task(pong())
    await ponger
    return await pinger


async def many_tasks(count: int) -> int:
    """`count` tasks wait on one event; returns how many woke."""
    event = asyncio.Event()
    woke = [0]

    async def waiter() -> None:
        await event.wait()
        woke[0] += 1

    tasks = [asyncio.create_task(waiter()) for _ in range(count)]
    await asyncio.sleep(0)
    event.set()
    await asyncio.gather(*tasks)
    return woke[0]


async def many_timers(count: int) -> int:
    """`count` timers spread over one second; returns how many fired."""
    loop = asyncio.get_running_loop()
    fired = [0]
    done = loop.create_future()

    def tick() -> None:
        fired[0] += 1
        if fired[0] == count:
            done.set_result(None)

    for i in range(count):
        loop.call_later(i / count, tick)
    await done
    return fired[0]


@dataclass(frozen=True)
class Workload:
    name: str
    size: int
    program: Callable[[int], Coroutine[Any, Any, int]]
    goal: float  # the highest ratio virtual/stock CPU that meets it


WORKLOADS = (
    Workload("ping-pong", 20_000, ping_pong, 1.0),
    Workload("tasks", 10_000, many_tasks, 1.5),
    Workload("timers", 100_000, many_timers, 1.5),
)


def stock_loop() -> asyncio.AbstractEventLoop:
    return asyncio.new_event_loop()


def virtual_loop() -> asyncio.AbstractEventLoop:
    return VirtualLoop(FirstChooser(), step_budget=None)


def measure(
    make: Callable[[], asyncio.AbstractEventLoop], workload: Workload, size: int,
) -> float:
    """CPU seconds of one run of `workload` at `size` on a fresh loop."""
    loop = make()
    try:
        start = time.process_time()
        result = loop.run_until_complete(workload.program(size))
        spent = time.process_time() - start
    finally:
        loop.close()
    if result < size:
        raise AssertionError(f"{workload.name} ended at {result} of {size}")
    return spent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    if args.scale <= 0 or args.repeat < 1:
        parser.error("--scale and --repeat must be positive")
    print(f"Python {platform.python_version()}, CPU time, best of {args.repeat}, "
          f"virtual / stock (lower is better)")
    for workload in WORKLOADS:
        size = max(1, round(workload.size * args.scale))
        measure(stock_loop, workload, max(1, size // 20))  # warm both paths up
        measure(virtual_loop, workload, max(1, size // 20))
        stock: list[float] = []
        virtual: list[float] = []
        for _ in range(args.repeat):
            stock.append(measure(stock_loop, workload, size))
            virtual.append(measure(virtual_loop, workload, size))
        best_stock, best_virtual = min(stock), min(virtual)
        ratio = best_virtual / best_stock
        verdict = "meets" if ratio <= workload.goal else "misses"
        print(f"  {workload.name:<10} {size:>8,}  stock {best_stock:7.3f} s  virtual "
              f"{best_virtual:7.3f} s  ratio {ratio:5.2f} ({verdict} <= {workload.goal:.1f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
