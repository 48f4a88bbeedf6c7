"""CPU cost of a message over a stream: the simulated network against loopback sockets.

    python benchmarks/net_pingpong.py [--messages N] [--repeat N]

A client and an echo server pass a 16-byte message back and forth over one TCP connection
(`asyncio.open_connection`, `start_server`, `readexactly`) until `--messages` messages have
crossed (each round trip is two). Measured in one run, interleaved, best of `--repeat` (CPU
time, `time.process_time`): the stock event loop on 127.0.0.1, and `VirtualLoop` with
`FirstChooser` (the step budget off) carrying `invariants.aio.net.Network`, where every
segment is a timer the loop arms, judged as it lands and recorded in the schedule.
Reported as messages per CPU second, side by side, and the ratio virtual/stock.

A script, not a test: timings depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import time
from collections.abc import Callable
from typing import Any

from invariants.adapter import FirstChooser
from invariants.aio import VirtualLoop
from invariants.aio.net import Network

MESSAGE = b"0123456789abcdef"


async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while data := await reader.read(1024):
        writer.write(data)
    writer.close()


async def ping_pong(host: str, port: int, messages: int) -> int:
    reader, writer = await asyncio.open_connection(host, port)
    crossed = 0
    while crossed < messages:
        writer.write(MESSAGE)
        await reader.readexactly(len(MESSAGE))
        crossed += 2
    writer.close()
    await writer.wait_closed()
    return crossed


async def on_loopback(messages: int) -> int:
    server = await asyncio.start_server(echo, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    crossed = await ping_pong("127.0.0.1", port, messages)
    server.close()
    return crossed


async def on_network(net: Network, messages: int) -> int:
    server = await net.host("srv").create_task(asyncio.start_server(echo, None, 7))
    crossed = await net.host("cli").create_task(ping_pong("srv", 7, messages))
    server.close()
    return crossed


def stock(messages: int) -> int:
    return asyncio.run(on_loopback(messages))


def virtual(messages: int) -> int:
    loop = VirtualLoop(FirstChooser(), step_budget=None)
    net = Network()
    net.attach(loop)
    try:
        crossed: int = loop.run_until_complete(on_network(net, messages))
    finally:
        loop.close()
    return crossed


def best(run: Callable[[int], int], messages: int, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.process_time()
        assert run(messages) >= messages
        times.append(time.process_time() - started)
    return min(times)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    runs: dict[str, Callable[[int], Any]] = {"stock loopback": stock,
                                              "virtual network": virtual}
    seconds = {name: float("inf") for name in runs}
    for _ in range(args.repeat):  # interleaved: a burst of load hits both alike
        for name, run in runs.items():
            seconds[name] = min(seconds[name], best(run, args.messages, 1))
    print(f"Python {platform.python_version()}, {args.messages} messages, best of "
          f"{args.repeat} (CPU seconds)")
    for name, spent in seconds.items():
        print(f"  {name:16} {spent:7.3f} s  {args.messages / spent:10,.0f} messages/CPU s")
    print(f"  virtual/stock throughput: "
          f"{seconds['stock loopback'] / seconds['virtual network']:.2f}x")


if __name__ == "__main__":
    main()
