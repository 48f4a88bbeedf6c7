"""`python -m pigeon demo`: three nodes on 127.0.0.1 on the stock asyncio loop."""

from __future__ import annotations

import asyncio
import socket
import sys

from pigeon.cluster import Cluster
from pigeon.letters import Letter
from pigeon.settings import Settings


def _free_ports(n: int) -> list[int]:
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


async def demo() -> int:
    loop = asyncio.get_running_loop()
    ports = _free_ports(3)
    names = ("n1", "n2", "n3")
    addresses = {n: ("127.0.0.1", p) for n, p in zip(names, ports, strict=True)}
    cluster = Cluster(Settings(), addresses, lambda: int(loop.time() * 1000))
    for hub in ("alpha", "beta", "gamma", "client"):
        cluster.directory[hub] = cluster.place(hub)
    nodes = [cluster.build_node(n, "127.0.0.1") for n in names]
    for node in nodes:
        await node.start()
    await asyncio.sleep(0.05)
    handled: list[str] = []
    for node in nodes:
        for hub in node.hubs.values():
            inner = hub.on_turn

            def seen(h, letter, inner=inner):  # type: ignore[no-untyped-def]
                handled.append(f"{h.name}<-{letter.body}({letter.id})")
                inner(h, letter)
            hub.on_turn = seen
    client = cluster.nodes[cluster.home["client"]]
    client.dispatch(Letter("m1", "client", "beta", "Hello"), "monolith")
    client.dispatch(Letter("m2", "client", "gamma", "Hello"), "monolith")
    client.dispatch(Letter("c1", "client", "beta", "GetTime"), "grain")
    client.dispatch(Letter("c2", "client", "gamma", "GetTime"), "grain")
    client.dispatch(Letter("c3", "client", "nowhere", "GetTime"), "grain")
    client.subscribe("s1", "client", "alpha", 3)
    for _ in range(100):
        await asyncio.sleep(0.02)
        if not any(n.legs for n in nodes) and not cluster.nodes[client.name].subs["s1"].open:
            break
    sub_open = client.subs["s1"].open
    cluster.stop(True, loop)
    assert cluster.stop_task is not None
    await cluster.stop_task
    for node in nodes:
        node.shut()
    await asyncio.sleep(0)
    for line in handled:
        print(line)
    ok = {"beta<-Hello(m1)", "gamma<-Hello(m2)", "beta<-GetTime(c1)",
          "gamma<-GetTime(c2)"} <= set(handled) and not sub_open and any(
              "ReturnSlip" in line and line.startswith("client") for line in handled)
    print("demo:", "ok" if ok else "FAILED", f"({len(handled)} letters handled)")
    return 0 if ok else 1


def main(argv: list[str]) -> int:
    if argv[1:2] != ["demo"]:
        print("usage: python -m pigeon demo", file=sys.stderr)
        return 2
    return asyncio.run(demo())


if __name__ == "__main__":
    sys.exit(main(sys.argv))
