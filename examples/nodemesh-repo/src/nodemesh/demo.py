"""`python3 -m nodemesh demo`: three nodes on 127.0.0.1, posts and calls across them, a
failure answer, a timed-out call, a call refused by a stopping node, and the stops."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from .calls import CallFailed
from .cluster import Cluster
from .envelope import DeliveryFailure, Envelope, Traffic
from .observer import EventLog
from .settings import Settings
from .shutdown import Phase

SETTINGS = Settings(response_timeout_ms=400, retries=3, backoff_base_ms=20,
                    backoff_cap_ms=80, stop_budget_ms=2000)


async def _until(condition: Callable[[], bool]) -> None:
    """Yield to the loop until `condition()` holds (the mesh's own work makes it so)."""
    while not condition():
        await asyncio.sleep(0)


async def demo() -> list[str]:
    log = EventLog()
    mesh = Cluster(["n1", "n2", "n3"], settings=SETTINGS, observer=log)
    await mesh.start()
    n1, n2, n3 = mesh["n1"], mesh["n2"], mesh["n3"]
    inbox: dict[str, list[Envelope]] = {"n1/alice": [], "n2/bob": [], "n3/carol": []}
    for address, mailbox in inbox.items():
        node, hub = address.split("/")

        async def keep(env: Envelope, mailbox: list[Envelope] = mailbox) -> object:
            mailbox.append(env)
            return None
        mesh[node].open_hub(hub, keep)
    total = 0

    async def add(env: Envelope) -> object:
        nonlocal total
        total += int(env.body)
        return total
    n2.open_hub("counter", add)
    release = asyncio.Event()

    async def slow(env: Envelope) -> object:
        await release.wait()
        return "done"
    n3.open_hub("slow", slow)
    ports = ", ".join(f"{name} on port {mesh.roster.address(name)[1]}" for name in mesh.nodes)
    lines = [f"nodemesh demo: {ports}"]

    n1.post("n1/alice", "n2/bob", "Hello", "from alice")
    n3.post("n3/carol", "n1/alice", "Hello", "from carol")
    n2.post("n2/bob", "n3/carol", "Hello", "from bob")
    totals = [await n1.call("n1/alice", "n2/counter", "Add", n) for n in (1, 2, 3)]
    totals.append(await n3.call("n3/carol", "n2/counter", "Add", 4))
    lines.append(f"calls to n2/counter answered with totals {totals}")

    lost = n1.post("n1/alice", "n2/nobody", "Hello")
    n1.post("n1/alice", "n3/nobody", "Ping", traffic=Traffic.HEARTBEAT)
    await _until(lambda: not n1.in_flight and [len(m) for m in inbox.values()] == [2, 1, 1])
    answer = DeliveryFailure.read(inbox["n1/alice"][-1])
    lines.append(f"posts handled across nodes: {sum(len(m) for m in inbox.values()) - 1}; "
                 f"{lost} to n2/nobody answered {answer.error} ({answer.answers}); "
                 f"a heartbeat to n3/nobody: {len(log.named('answer_withheld'))} withheld")

    try:
        await n1.call("n1/alice", "n3/slow", "Work")
    except CallFailed as failed:
        sends = len(log.about(failed.env_id, "sent"))
        lines.append(f"call to n3/slow: {failed.error} after {sends} attempt(s), not re-sent")

    slow_call = asyncio.create_task(n2.call("n2/bob", "n3/slow", "Work"))
    await _until(lambda: n2.in_flight == 1)
    stopping = asyncio.create_task(n2.stop())
    await _until(lambda: n2.phase is Phase.STOPPING)
    try:
        await n1.call("n1/alice", "n2/counter", "Add", 5)
    except CallFailed as refused:
        sends = len(log.about(refused.env_id, "sent"))
        lines.append(f"call to stopping n2: {refused.error} on each of {sends} attempt(s)")
    release.set()
    lines.append(f"n2's held call to n3/slow answered {await slow_call!r}")
    await stopping
    hold = log.named("hold_ended")[0]
    lines.append(f"n2 stopped: its hold ended {hold['reason']}")
    await mesh.stop()
    counts = log.counts()
    lines.append("events: " + ", ".join(f"{name} {n}" for name, n in counts.items()))
    return lines


def main() -> int:
    for line in asyncio.run(demo()):
        print(line)
    return 0
