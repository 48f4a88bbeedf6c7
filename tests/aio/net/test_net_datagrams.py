"""Datagrams on the simulated network: the same exchange as over loopback UDP, and lost,
duplicated or reordered only by the chooser's verdict (FIFO choices: never), each verdict
in the schedule."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from net_helpers import Scripted, no_real_sockets, nth_verdict_on
from net_programs import Place, Transcript, error, net_place, stock_place

from invariants.adapter import Chooser, SeededChooser
from invariants.aio import Schedule, render_schedule
from invariants.aio.net import Network, run
from invariants.aio.net.wire import Flight


class Inbox(asyncio.DatagramProtocol):
    def __init__(self, name: str, queue: asyncio.Queue[str]) -> None:
        self.name = name
        self.queue = queue
        self.lost: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        self.queue.put_nowait(f"{self.name} got {data!r}")

    def error_received(self, exc: Exception) -> None:
        self.queue.put_nowait(f"{self.name} error {error(exc)}")

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost.set_result(None)


async def exchange(place: Place) -> Transcript:
    """A connected client and a server: a request, a reply to the client's address, a
    send to another address refused, and, the server gone, a refusal reported."""
    seen: Transcript = []
    queue: asyncio.Queue[str] = asyncio.Queue()

    async def endpoint(name: str, **where: Any) -> tuple[Any, Inbox]:
        loop = asyncio.get_running_loop()
        return await loop.create_datagram_endpoint(lambda: Inbox(name, queue), **where)

    server, server_inbox = await place.on("srv", endpoint(
        "server", local_addr=(place.address("srv"), 0)))
    port = server.get_extra_info("sockname")[1]
    client, _ = await place.on("cli", endpoint(
        "client", remote_addr=(place.address("srv"), port)))
    client.sendto(b"hi")
    seen.append(await queue.get())
    server.sendto(b"back", client.get_extra_info("sockname"))
    seen.append(await queue.get())
    try:
        client.sendto(b"x", (place.address("srv"), port + 1))
    except ValueError as exc:
        seen.append(f"client: {type(exc).__name__}")
    server.close()
    await server_inbox.lost
    client.sendto(b"again")
    seen.append(await queue.get())
    client.close()
    return seen


def test_the_same_exchange_as_over_loopback_udp() -> None:
    stock = asyncio.run(exchange(stock_place()))
    net = Network()
    with no_real_sockets():
        virtual = run(exchange(net_place(net)), network=net).result
    assert virtual == stock == [
        "server got b'hi'", "client got b'back'", "client: ValueError",
        "client error ConnectionRefusedError(111)",
    ]


COUNT = 30


def burst(chooser: Chooser | None) -> tuple[list[int], Schedule]:
    """`COUNT` numbered datagrams, one a millisecond, cli to srv: the numbers received."""
    net = Network()
    received: list[int] = []

    class Counter(asyncio.DatagramProtocol):
        def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
            received.append(int(data))

    async def main() -> None:
        loop = asyncio.get_running_loop()

        async def serve() -> asyncio.BaseTransport:
            transport, _ = await loop.create_datagram_endpoint(
                Counter, local_addr=("srv", 53))
            return transport

        async def send() -> None:
            transport, _ = await loop.create_datagram_endpoint(
                asyncio.DatagramProtocol, remote_addr=("srv", 53))
            for number in range(COUNT):
                transport.sendto(b"%02d" % number)
                await asyncio.sleep(0.001)
            await asyncio.sleep(5)  # past every delay
            transport.close()

        server = await net.host("srv").create_task(serve())
        await net.host("cli").create_task(send())
        server.close()

    with no_real_sockets():
        result = run(main(), network=net, chooser=chooser)
    return received, result.schedule


def test_a_healthy_network_delivers_each_datagram_once_in_order() -> None:
    received, schedule = burst(None)
    assert received == list(range(COUNT))
    assert render_schedule(schedule) == "FIFO"
    assert sum(d.options == 5 for d in schedule.decisions) == COUNT  # each one judged


def test_loss_duplication_and_reorder_come_only_from_verdicts() -> None:
    """The 3rd datagram dropped, the 5th duplicated, the 7th delayed by 5 ms (behind the
    next four); the schedule says so."""
    chooser = nth_verdict_on("datagram cli→srv", {3: 1, 5: 2, 7: 3})
    received, schedule = burst(chooser)
    expected = [n for n in range(COUNT) if n not in (3, 7)]
    expected.insert(expected.index(5), 5)
    expected.insert(expected.index(12), 7)
    assert received == expected
    assert render_schedule(schedule).splitlines()[1:] == [
        "  at t=4 ms (step 20), dropped datagram cli→srv (2 bytes)",
        "  at t=6 ms (step 25), duplicated datagram cli→srv (2 bytes)",
        "  at t=8 ms (step 31), delayed datagram cli→srv (2 bytes) by 5 ms",
    ]


def _accounted(received: list[int], schedule: Schedule) -> bool:
    """Whether every loss and duplicate is one the schedule's verdicts chose."""
    verdicts = [d.ran for d in schedule.decisions if "datagram" in d.ran]
    dropped = sum(ran.startswith("verdict: dropped") for ran in verdicts)
    doubled = sum(ran.startswith("verdict: duplicated") for ran in verdicts)
    return len(verdicts) == COUNT and len(received) == COUNT - dropped + doubled


@pytest.mark.parametrize("seed", range(3))
def test_seeded_verdicts_account_for_every_loss_and_duplicate(seed: int) -> None:
    received, schedule = burst(SeededChooser(seed))
    assert received != list(range(COUNT))  # the seed did something
    assert _accounted(received, schedule)


def test_a_loss_no_verdict_chose_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Negative control: a wire that loses every fifth datagram on its own."""
    fire = Flight.fire
    count = [0]

    def lossy(flight: Flight) -> None:
        count[0] += 1
        if count[0] % 5:
            fire(flight)

    monkeypatch.setattr(Flight, "fire", lossy)
    received, schedule = burst(Scripted(lambda options, why: 0))
    assert not _accounted(received, schedule)
