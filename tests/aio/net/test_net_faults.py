"""Faults are calls: a partition (two-way or one-way) holds segments until it heals and
loses datagrams; a hold delays everything on a link until released; a slow link takes its
time; a crashed host's connections die without a word (its peer learns by a reset once the
host is back, or by its own timeout), its tasks are cancelled, and a restarted host runs
nothing until the node is rebuilt. Each with the healthy run as its control."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import pytest
from net_helpers import no_real_sockets

from invariants.aio import VirtualLoop
from invariants.aio.net import Network, run
from invariants.aio.net.wire import HELD_DATAGRAMS_PER_LINK

PORT = 7


async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(100):
            writer.write(data)
            await writer.drain()
    finally:
        writer.close()


async def start_echo(net: Network, host: str = "srv") -> asyncio.Server:
    async def start() -> asyncio.Server:
        return await asyncio.start_server(echo, None, PORT)

    return await net.host(host).create_task(start())


def on_net(net: Network, main: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
    with no_real_sockets():
        return run(main(), network=net).result


def round_trip(fault: Callable[[Network, asyncio.AbstractEventLoop], None] | None) -> Any:
    """One echo over an open connection, `fault` made just before the write: the reply,
    or the error, and the virtual ms it took."""
    net = Network()

    async def main() -> Any:
        await start_echo(net)

        async def client() -> Any:
            loop = asyncio.get_running_loop()
            reader, writer = await asyncio.open_connection("srv", PORT)
            if fault is not None:
                fault(net, loop)
            start = loop.time()
            writer.write(b"ping")
            try:
                reply: Any = await asyncio.wait_for(reader.readexactly(4), 60)
            except (OSError, TimeoutError) as exc:
                reply = type(exc).__name__
            writer.close()
            return reply, round((loop.time() - start) * 1000)

        return await net.host("cli").create_task(client())

    return on_net(net, main)


def test_a_healthy_round_trip_takes_two_hops() -> None:
    assert round_trip(None) == (b"ping", 2)


def test_a_partition_holds_segments_until_it_heals() -> None:
    def cut(net: Network, loop: asyncio.AbstractEventLoop) -> None:
        net.partition({"cli"}, {"srv"})
        loop.call_later(5, net.heal)

    assert round_trip(cut) == (b"ping", 5002)


def test_a_one_way_partition_holds_only_its_way() -> None:
    def reply_cut(net: Network, loop: asyncio.AbstractEventLoop) -> None:
        net.partition({"srv"}, {"cli"}, one_way=True)
        loop.call_later(5, net.heal)

    def request_cut(net: Network, loop: asyncio.AbstractEventLoop) -> None:
        net.partition({"cli"}, {"srv"}, one_way=True)
        loop.call_later(5, net.heal)

    assert round_trip(reply_cut) == (b"ping", 5001)  # the request went; the echo waited
    assert round_trip(request_cut) == (b"ping", 5002)


def test_a_hold_delays_a_link_until_released() -> None:
    def held(net: Network, loop: asyncio.AbstractEventLoop) -> None:
        net.hold(("cli", "srv"))
        loop.call_later(3, net.release, ("cli", "srv"))

    assert round_trip(held) == (b"ping", 3002)


def test_a_slow_link_takes_its_latency() -> None:
    def slow(net: Network, loop: asyncio.AbstractEventLoop) -> None:
        net.slow(("cli", "srv"), 50)

    def slow_one_way(net: Network, loop: asyncio.AbstractEventLoop) -> None:
        net.slow(("cli", "srv"), 50, one_way=True)

    assert round_trip(slow) == (b"ping", 100)
    assert round_trip(slow_one_way) == (b"ping", 51)


def test_a_crashed_and_restarted_peer_resets_the_next_write() -> None:
    def crash_restart(net: Network, loop: asyncio.AbstractEventLoop) -> None:
        net.crash("srv")
        net.restart("srv")

    assert round_trip(crash_restart) == ("ConnectionResetError", 2)


def test_a_peer_that_stays_down_is_learnt_by_the_callers_own_timeout() -> None:
    def crash(net: Network, loop: asyncio.AbstractEventLoop) -> None:
        net.crash("srv")

    assert round_trip(crash) == ("TimeoutError", 60000)


def test_a_peer_back_after_a_while_resets_what_waited_for_it() -> None:
    """Segments sent while the host is down wait (TCP retransmits); the host back, they
    meet no socket and are reset."""
    def crash(net: Network, loop: asyncio.AbstractEventLoop) -> None:
        net.crash("srv")
        loop.call_later(4, net.restart, "srv")

    assert round_trip(crash) == ("ConnectionResetError", 4002)


def test_a_crash_cancels_the_hosts_tasks_and_frees_its_ports() -> None:
    """The server's handler is cancelled; restarted, the host runs nothing until the node
    is rebuilt (its server again on the same port), and then serves new connections."""
    net = Network()
    seen: list[str] = []

    async def main() -> list[str]:
        await start_echo(net)
        _reader, writer = await net.host("cli").create_task(
            asyncio.open_connection("srv", PORT))
        await asyncio.sleep(0.01)
        handlers = [t for t in net.host("srv").tasks if not t.done()]
        net.crash("srv")
        await asyncio.sleep(0)
        seen.append(f"handlers cancelled: {all(t.cancelled() for t in handlers)}")
        net.restart("srv")
        seen.append(f"running on srv: {[t for t in net.host('srv').tasks if not t.done()]}")

        async def connect() -> str:
            try:
                _reader, writer = await asyncio.open_connection("srv", PORT)
            except OSError as exc:
                return type(exc).__name__
            writer.close()
            return "connected"

        seen.append(f"before rebuilding: {await net.host('cli').create_task(connect())}")
        server = await start_echo(net)
        seen.append(f"rebuilt: {await net.host('cli').create_task(connect())}")
        server.close()
        writer.close()
        return seen

    assert on_net(net, main) == [
        "handlers cancelled: True", "running on srv: []",
        "before rebuilding: ConnectionRefusedError", "rebuilt: connected",
    ]


def test_a_connect_across_a_partition_waits_for_the_heal() -> None:
    net = Network()

    async def main() -> tuple[str, float]:
        await start_echo(net)
        net.host("cli")
        net.partition({"cli"}, {"srv"})
        loop = asyncio.get_running_loop()
        loop.call_later(2, net.heal)
        _reader, writer = await net.host("cli").create_task(
            asyncio.open_connection("srv", PORT))
        writer.close()
        return "connected", loop.time()

    assert on_net(net, main) == ("connected", 2.002)


def test_datagrams_across_a_partition_are_lost_and_a_hold_keeps_them() -> None:
    def exchange(fault: Callable[[Network], None] | None) -> list[tuple[str, bytes]]:
        net = Network()
        got: list[tuple[str, bytes]] = []

        class Inbox(asyncio.DatagramProtocol):
            def __init__(self, name: str) -> None:
                self.name = name

            def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
                got.append((self.name, data))

        async def main() -> None:
            async def bind(name: str) -> asyncio.DatagramTransport:
                transport, _ = await asyncio.get_running_loop().create_datagram_endpoint(
                    lambda: Inbox(name), local_addr=("0.0.0.0", 9))
                return transport

            a = await net.host("a").create_task(bind("a"))
            b = await net.host("b").create_task(bind("b"))
            if fault is not None:
                fault(net)
            a.sendto(b"to b", ("b", 9))
            b.sendto(b"to a", ("a", 9))
            await asyncio.sleep(1)
            net.heal()
            net.release(("a", "b"))
            await asyncio.sleep(1)
            a.close()
            b.close()

        on_net(net, main)
        return sorted(got)

    both = [("a", b"to a"), ("b", b"to b")]
    assert exchange(None) == both
    assert exchange(lambda net: net.partition({"a"}, {"b"})) == []
    assert exchange(lambda net: net.partition({"a"}, {"b"}, one_way=True)) == [("a", b"to a")]
    assert exchange(lambda net: net.hold(("a", "b"))) == both


def test_a_held_link_buffers_a_bounded_number_of_datagrams() -> None:
    """A held link keeps its first `HELD_DATAGRAMS_PER_LINK` datagrams for the release and
    loses the rest, as a router's full queue drops them; the control: as many as it
    buffers all arrive."""

    def held_then_released(count: int) -> list[bytes]:
        net = Network()
        got: list[bytes] = []

        class Inbox(asyncio.DatagramProtocol):
            def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
                got.append(data)

        async def main() -> None:
            async def bind(protocol: Callable[[], asyncio.DatagramProtocol]
                           ) -> asyncio.DatagramTransport:
                transport, _ = await asyncio.get_running_loop().create_datagram_endpoint(
                    protocol, local_addr=("0.0.0.0", 9))
                return transport

            a = await net.host("a").create_task(bind(asyncio.DatagramProtocol))
            b = await net.host("b").create_task(bind(Inbox))
            net.hold(("a", "b"))
            for i in range(count):
                a.sendto(b"%d" % i, ("b", 9))
            await asyncio.sleep(1)
            net.release(("a", "b"))
            await asyncio.sleep(1)
            a.close()
            b.close()

        on_net(net, main)
        return got

    bound = HELD_DATAGRAMS_PER_LINK
    assert held_then_released(bound + 10) == [b"%d" % i for i in range(bound)]
    assert held_then_released(bound) == [b"%d" % i for i in range(bound)]


def test_a_harness_drives_the_faults_between_steps() -> None:
    """The harness's way: tasks spawned on hosts, the loop advanced, faults called in
    between."""
    net = Network()
    loop = VirtualLoop()
    net.attach(loop)
    replies: list[tuple[int, bytes]] = []

    async def client() -> None:
        reader, writer = await asyncio.open_connection("srv", PORT)
        for _ in range(3):
            writer.write(b"tick")
            reply = await reader.readexactly(4)
            replies.append((loop.now_ms, reply))
            await asyncio.sleep(1)
        writer.close()

    with no_real_sockets():
        net.host("srv").create_task(asyncio.start_server(echo, None, PORT))
        loop.advance(0)
        net.host("cli").create_task(client())
        loop.advance(500)
        net.partition({"cli"}, {"srv"})
        loop.advance(5000)
        net.heal()
        loop.run_until_idle(10_000)
    assert replies == [(4, b"tick"), (5502, b"tick"), (6504, b"tick")]


@pytest.mark.parametrize(("call", "message"), [
    (lambda net: net.crash("nowhere"), "crash: no host named 'nowhere' (hosts: cli, srv)"),
    (lambda net: net.restart("srv"), "restart: host 'srv' is up (crash it first)"),
    (lambda net: net.partition({"cli"}, {"cli", "srv"}), "partition: ['cli'] on both sides"),
    (lambda net: net.hold("cli"), "hold: a link is a pair of host names, got 'cli'"),
    (lambda net: net.slow(("cli", "srv"), -1), "slow: ms must be >= 0, got -1"),
    (lambda net: net.host("10.0.0.9"), "host: '10.0.0.9' is an address, not a host name"),
])
def test_a_bad_fault_call_names_the_call(call: Callable[[Network], None], message: str) -> None:
    net = Network()
    net.host("cli")
    net.host("srv")
    with pytest.raises(ValueError) as caught:
        call(net)
    assert str(caught.value) == message


def test_a_crash_of_a_host_that_is_down_is_refused() -> None:
    net = Network()
    net.host("srv")
    net.crash("srv")
    with pytest.raises(ValueError, match="crash: host 'srv' is down already"):
        net.crash("srv")
    with pytest.raises(TypeError, match="slow: ms must be a whole number of milliseconds"):
        net.slow(("srv", "srv"), 1.5)  # type: ignore[arg-type]


def test_a_crash_cancels_the_timers_the_hosts_code_armed_not_the_packets_on_the_wire() -> None:
    """A crashed machine runs nothing more: a retransmission timer its code armed with
    `call_later` does not fire (nor after the restart), while the same timer on another
    host does, and a datagram it sent before the crash still lands at its peer."""
    net = Network()
    seen: list[str] = []

    class Sink(asyncio.DatagramProtocol):
        def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
            seen.append(f"{asyncio.get_running_loop().time() * 1000:.0f} ms: got {data!r}")

    async def main() -> list[str]:
        loop = asyncio.get_running_loop()

        async def arm(name: str) -> None:
            loop.call_later(0.5, lambda: seen.append(f"{name}'s timer fired"))

        async def bind() -> None:
            await loop.create_datagram_endpoint(Sink, local_addr=("0.0.0.0", PORT))

        async def send() -> None:
            transport, _ = await loop.create_datagram_endpoint(
                asyncio.DatagramProtocol, remote_addr=("srv", PORT))
            transport.sendto(b"sent before the crash")

        await net.host("srv").create_task(bind())
        await net.host("cli").create_task(arm("cli"))
        await net.host("srv").create_task(arm("srv"))
        await net.host("cli").create_task(send())
        net.crash("cli")
        await asyncio.sleep(0.1)
        net.restart("cli")
        await asyncio.sleep(1)
        return seen

    assert on_net(net, main) == ["1 ms: got b'sent before the crash'", "srv's timer fired"]
