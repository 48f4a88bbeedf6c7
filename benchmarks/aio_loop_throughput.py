"""Throughput of the virtual loop against asyncio's own, on a ping-pong over queues.

    python benchmarks/aio_loop_throughput.py [--messages N] [--repeat N]

Two tasks pass a counter back and forth over two `asyncio.Queue`s until `--messages`
messages (default 20,000) have crossed: the shape of a mesh's hub pumps, with no timer in
play. Measured in one run, interleaved, best of `--repeat` (CPU time, `time.process_time`,
so other processes disturb it less): the stock event loop (`asyncio.new_event_loop()`),
and `invariants.aio.VirtualLoop` with `FirstChooser`, the way the harness runs it (the
step budget off: the whole ping-pong is one virtual instant). Reported side by side as
messages per CPU second and the ratio virtual/stock; goal >= 0.75.

A script, not a test: timings depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import time
from collections.abc import Callable

from invariants.adapter import FirstChooser
from invariants.aio import VirtualLoop

GOAL = 0.75


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


def stock_loop() -> asyncio.AbstractEventLoop:
    return asyncio.new_event_loop()


def virtual_loop() -> asyncio.AbstractEventLoop:
    return VirtualLoop(FirstChooser(), step_budget=None)


def measure(make: Callable[[], asyncio.AbstractEventLoop], messages: int) -> float:
    """CPU seconds of one ping-pong of `messages` messages on a fresh loop."""
    loop = make()
    try:
        start = time.process_time()
        last = loop.run_until_complete(ping_pong(messages))
        spent = time.process_time() - start
    finally:
        loop.close()
    if last < messages:
        raise AssertionError(f"the ping-pong ended at {last} of {messages} messages")
    return spent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    if args.messages < 1 or args.repeat < 1:
        parser.error("--messages and --repeat must be positive")
    measure(stock_loop, 1000)  # warm both paths up
    measure(virtual_loop, 1000)
    stock: list[float] = []
    virtual: list[float] = []
    for _ in range(args.repeat):
        stock.append(measure(stock_loop, args.messages))
        virtual.append(measure(virtual_loop, args.messages))
    best_stock, best_virtual = min(stock), min(virtual)
    ratio = best_stock / best_virtual  # throughput virtual / stock
    print(
        f"ping-pong of {args.messages} messages over asyncio.Queue, Python "
        f"{platform.python_version()}, CPU time, best of {args.repeat}"
    )
    print(f"  stock loop     {best_stock:8.4f} s  {args.messages / best_stock:12,.0f} msg/s")
    print(f"  virtual loop   {best_virtual:8.4f} s  {args.messages / best_virtual:12,.0f} msg/s")
    verdict = "meets" if ratio >= GOAL else "misses"
    print(f"  ratio virtual/stock {ratio:.2f} ({verdict} the goal of >= {GOAL:.2f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
