"""A simulated network inside the virtual loop: named hosts, TCP streams and UDP datagrams,
and faults, with no real socket opened (docs/network.md).

    net = Network()
    server, client = net.host("n1"), net.host("n2")
    result = run(main(), network=net, chooser=SeededChooser(7))

Code runs on a host (`net.host("n1").create_task(coro)`); asyncio's own networking
(`open_connection`, `start_server`, `create_connection`, `create_server`,
`create_datagram_endpoint`, `getaddrinfo`) then works unmodified. Every packet is a timer
judged as it lands by the loop's chooser (option 0: delivered after the link's latency),
recorded in the loop's schedule.
"""

from invariants.aio.net.hosts import Host, current_host
from invariants.aio.net.network import DEFAULT_HOLDS_MS, DEFAULT_LATENCY_MS, Network
from invariants.aio.net.run import run
from invariants.aio.net.sockets import SimSocket

__all__ = [
    "DEFAULT_HOLDS_MS",
    "DEFAULT_LATENCY_MS",
    "Host",
    "Network",
    "SimSocket",
    "current_host",
    "run",
]
