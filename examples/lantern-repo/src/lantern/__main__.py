"""`python3 -m lantern demo`: three nodes on 127.0.0.1, some calls, a graceful stop."""

from __future__ import annotations

import asyncio
import sys

from lantern.cluster import Cluster
from lantern.messages import IGNORABLE, envelope

NODES = ("n1", "n2", "n3")


async def demo() -> int:
    cluster = Cluster(NODES)
    await asyncio.gather(*(node.start_task for node in cluster.nodes.values()))
    for hub in ("alpha", "beta", "gamma", "client"):
        cluster.add_hub(hub)
    print("lantern demo: nodes", ", ".join(f"{n}@127.0.0.1:{cluster.ports[n]}" for n in NODES))
    print("placement:", ", ".join(f"{hub}->{node}" for hub, node in cluster.directory.items()))
    posts = 0
    for target in ("alpha", "beta", "gamma"):
        for route in ("grain", "monolith", "direct"):
            posts += 1
            cluster.post(envelope(cluster.new_id("d"), "client", target, "Ping", key=f"k{posts}"), route)
    cluster.post(envelope(cluster.new_id("d"), "client", "alpha", "Heartbeat", IGNORABLE), "monolith")
    cluster.post(envelope(cluster.new_id("d"), "client", "nowhere", "Ping"), "grain")  # answered NotFound
    home = cluster.nodes[cluster.node_of("client")]
    home.open_subscription(cluster.new_id("s"), "client", "beta", 3)
    await asyncio.sleep(0.5)
    handled = {hub: node.hubs[hub].handled for hub, node in
               ((h, cluster.nodes[n]) for h, n in cluster.directory.items())}
    print("handled:", ", ".join(f"{hub}={count}" for hub, count in handled.items()))
    print("subscriptions:", ", ".join(f"{sid}={how}" for sid, how in home.finished.items()))
    stop = cluster.request_stop(graceful=True)
    if stop is not None:
        await stop
    print("stopped:", cluster.stopped, "legs in flight:", cluster.in_flight())
    await cluster.close()
    await asyncio.sleep(0.05)
    ok = (cluster.stopped and handled["alpha"] == 4 and handled["beta"] == 4
          and handled["gamma"] == 3 and handled["client"] == 1
          and list(home.finished.values()) == ["answered"])
    print("demo", "ok" if ok else "FAILED")
    return 0 if ok else 1


def main(argv: list[str]) -> int:
    if argv[1:] != ["demo"]:
        print("usage: python3 -m lantern demo", file=sys.stderr)
        return 2
    return asyncio.run(demo())


if __name__ == "__main__":
    sys.exit(main(sys.argv))
