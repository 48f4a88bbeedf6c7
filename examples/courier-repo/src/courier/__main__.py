"""`python3 -m courier demo`: three nodes on 127.0.0.1, a few calls and posts, a stop."""
from __future__ import annotations

import asyncio
import sys

from courier.cluster import Cluster
from courier.config import Config
from courier.notices import Parcel


async def demo() -> int:
    names = ["n1", "n2", "n3"]
    cluster = Cluster(names, Config(), {n: ("127.0.0.1", 0) for n in names})
    for hub in ["alpha", "beta", "gamma", "client"]:
        cluster.place(hub)
    for name in names:  # port 0: the OS picks; the directory learns the port
        node = cluster.nodes[name]
        await node.start()
        assert node.server is not None
        cluster._addresses[name] = ("127.0.0.1", node.server.sockets[0].getsockname()[1])
    home = cluster.nodes[cluster.node_of("client") or "n1"]
    results = []
    for i, target in enumerate(["alpha", "beta", "gamma", "nowhere"]):
        results.append(await home.route(Parcel(f"d{i}", "client", target, "Ping")))
    await home.call(Parcel("g1", "client", "beta", "Work"))
    cluster.open_subscription("s1", home.name, "client")
    sub = asyncio.get_running_loop().create_task(home.subscribe("s1", "client", "gamma", 3))
    await asyncio.wait_for(sub, 5)
    await asyncio.sleep(0.05)
    for target, outcome in zip(["alpha", "beta", "gamma", "nowhere"], results, strict=False):
        print(f"post to {target}: {outcome}")
    for name in names:
        for hub in cluster.nodes[name].hubs.values():
            print(f"{name}/{hub.name} handled {hub.handled}")
    if cluster.request_stop(graceful=True):
        await cluster.run_stop()
    for node in cluster.nodes.values():
        assert node.server is not None
        node.server.close()
        for writer in node.links.values():
            writer.close()
        for task in list(node.tasks):
            task.cancel()
        for hub in node.hubs.values():
            if hub.task is not None:
                hub.task.cancel()
    await asyncio.sleep(0.05)
    print("stopped")
    return 0


def main(argv: list[str]) -> int:
    if argv[1:2] != ["demo"]:
        print("usage: python3 -m courier demo", file=sys.stderr)
        return 2
    return asyncio.run(demo())


if __name__ == "__main__":
    sys.exit(main(sys.argv))
