"""`python -m ferry demo`: the broker and three nodes on 127.0.0.1, a little traffic, a stop."""
from __future__ import annotations

import asyncio
import sys

from .cluster import Cluster, new_subscription
from .config import Settings
from .messages import Delivery


async def demo() -> int:
    settings = Settings(nodes=("n1", "n2", "n3"), broker_host="127.0.0.1", broker_port=0)
    cluster = Cluster(settings)
    server = await cluster.broker.serve()
    port = server.sockets[0].getsockname()[1]
    cluster.settings = Settings(nodes=settings.nodes, broker_host="127.0.0.1", broker_port=port)
    runs = []
    for name in settings.nodes:
        node = cluster.build_node(name)
        node.settings = cluster.settings
        runs.append(asyncio.get_running_loop().create_task(node.run()))
    for hub in ("orders", "billing", "audit", "client"):
        cluster.add_hub(hub, 256, 100)
    await asyncio.sleep(0.2)
    home = cluster.live(cluster.node_for("client"))
    assert home is not None
    tasks = []
    for i, target in enumerate(("orders", "billing", "audit", "nowhere")):
        leg = home.accept(Delivery(f"d{i}", "client", target, "Note"), "route")
        if leg is not None:
            tasks.append(home.dispatch(leg))
    leg = home.accept(Delivery("d9", "client", "orders", "PlaceOrder", route="grain"), "grain")
    if leg is not None:
        tasks.append(home.call(leg))
    await asyncio.gather(*tasks)
    sub = new_subscription("s1", "client", "billing", 2)
    await home.subscribe(sub)
    await asyncio.sleep(0.5)
    handled = sum(h.queue.qsize() == 0
                  for n in cluster.nodes.values() if n for h in n.hubs.values())
    cluster.request_stop(True)
    await cluster.run_stop()
    for node in cluster.nodes.values():
        if node is not None:
            node.dead = True
            if node.writer is not None:
                node.writer.close()
    for run in runs:
        run.cancel()
    await asyncio.gather(*runs, return_exceptions=True)
    server.close()
    print(f"ferry demo: 3 nodes, {handled} hubs drained, stop completed: {cluster.completed}")
    return 0 if cluster.completed else 1


def main(argv: list[str]) -> int:
    if argv[1:2] != ["demo"]:
        print("usage: python -m ferry demo", file=sys.stderr)
        return 2
    return asyncio.run(demo())


if __name__ == "__main__":
    sys.exit(main(sys.argv))
