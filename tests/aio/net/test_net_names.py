"""Names, servers and protocols on the simulated network: `getaddrinfo` answers as the
stock loop does for its hosts and refuses other names; what is not simulated stays fenced;
code on no host is refused; servers bind, serve and close as asyncio's do; a protocol may
pause its reading; and no real socket is ever made (the check itself shown to bite)."""

from __future__ import annotations

import asyncio
import errno
import socket
import sys
from collections.abc import Callable, Coroutine
from typing import Any

import pytest
from net_helpers import RealSocket, no_real_sockets

from invariants.aio import FencedCall, VirtualLoop
from invariants.aio.net import Network, run


def on(net: Network, host: str | None, body: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
    """`body()` run on `host` (None: on no host), its value or the error it raised."""
    async def main() -> Any:
        coro = body()
        try:
            return await (net.host(host).create_task(coro) if host else coro)
        except (OSError, ValueError) as exc:
            return exc

    with no_real_sockets():
        return run(main(), network=net).result


def loop() -> asyncio.AbstractEventLoop:
    return asyncio.get_running_loop()


def test_getaddrinfo_answers_as_the_stock_loop_does() -> None:
    async def localhost() -> Any:
        return await loop().getaddrinfo("localhost", 80, family=socket.AF_INET)

    def with_n1() -> Network:
        net = Network()
        net.host("n1")
        return net

    stock = asyncio.run(localhost())
    assert on(with_n1(), None, localhost) == stock
    assert on(with_n1(), None, lambda: loop().getaddrinfo("n1", "80", type=socket.SOCK_STREAM)
              ) == [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", ("10.0.0.1", 80))]
    assert on(with_n1(), None, lambda: loop().getnameinfo(("10.0.0.1", 80))) == ("n1", "80")


@pytest.mark.parametrize(("name", "code", "message"), [
    ("example.com", socket.EAI_NONAME,
     "Name or service not known: 'example.com' is no host of the simulated network "
     "(its hosts: n1)"),
    ("::1", socket.EAI_FAMILY, "Address family for hostname not supported: '::1' (the "
     "simulated network is IPv4 only)"),
])
def test_other_names_are_refused_as_unknown(name: str, code: int, message: str) -> None:
    net = Network()
    net.host("n1")
    refusal = on(net, None, lambda: loop().getaddrinfo(name, 80))
    assert isinstance(refusal, socket.gaierror)
    assert refusal.args == (code, message)


def test_connecting_to_an_unknown_host_fails_as_on_the_stock_loop() -> None:
    async def connect() -> Any:
        try:
            await asyncio.open_connection("nowhere.invalid", 80)
        except OSError as exc:
            return type(exc), exc.errno
        return None

    assert on(Network(), "n1", connect) == asyncio.run(connect()) == (socket.gaierror,
                                                                       socket.EAI_NONAME)
    unreachable = on(Network(), "n1", lambda: asyncio.open_connection("10.9.9.9", 80))
    assert isinstance(unreachable, OSError) and unreachable.errno == errno.EHOSTUNREACH


def test_code_on_no_host_is_refused() -> None:
    net = Network()
    net.host("n1")
    with no_real_sockets(), pytest.raises(FencedCall) as caught:
        run(asyncio.open_connection("n1", 80), network=net)
    assert caught.value.call == "create_connection"
    assert "on no host of the simulated network" in str(caught.value)


@pytest.mark.parametrize(("call", "body"), [
    ("sock_recv", lambda: loop().sock_recv(None, 1)),  # type: ignore[arg-type]
    ("subprocess_exec", lambda: asyncio.create_subprocess_exec("true")),
    ("create_unix_connection", lambda: asyncio.open_unix_connection("/tmp/x")),
    ("create_connection", lambda: asyncio.open_connection("n1", 80, ssl=True)),
])
def test_what_is_not_simulated_stays_fenced(call: str, body: Callable[[], Any]) -> None:
    net = Network()
    net.host("n1")
    with no_real_sockets(), pytest.raises(FencedCall) as caught:
        run(_on_host(net, body), network=net)
    assert caught.value.call == call


async def _on_host(net: Network, body: Callable[[], Any]) -> Any:
    return await net.host("n1").create_task(_awaited(body))


async def _awaited(body: Callable[[], Any]) -> Any:
    return await body()


def test_a_loop_without_a_network_keeps_its_fences() -> None:
    net = Network()
    net.attach(VirtualLoop())
    other = VirtualLoop()
    with pytest.raises(ValueError, match="attach: the network is attached to another loop"):
        net.attach(other)
    with pytest.raises(FencedCall, match=r"VirtualLoop\.create_connection is fenced"):
        other.run_until_complete(asyncio.open_connection("n1", 80))


def test_servers_bind_serve_and_close_as_asyncios_do() -> None:
    net = Network()
    net.host("n2")

    async def connect() -> str:
        try:
            _reader, writer = await net.host("n2").create_task(
                asyncio.open_connection("n1", 80))
        except OSError as exc:
            return type(exc).__name__
        writer.close()
        return "connected"

    async def body() -> list[Any]:
        seen: list[Any] = []
        server = await asyncio.start_server(lambda r, w: w.close(), "n1", 80,
                                            start_serving=False)
        seen.append(server.sockets[0].getsockname())
        seen.append(await connect())  # bound, not listening: refused
        await server.start_serving()
        seen.append(await connect())
        for host, port in (("n1", 80), (None, 80), ("n2", 81)):
            try:
                await asyncio.start_server(lambda r, w: w.close(), host, port)
            except OSError as exc:
                seen.append(errno.errorcode[exc.errno or 0])
        server.close()
        await server.wait_closed()
        seen.append(await connect())
        return seen

    assert on(net, "n1", body) == [
        ("10.0.0.2", 80), "ConnectionRefusedError", "connected", "EADDRINUSE", "EADDRINUSE",
        "EADDRNOTAVAIL", "ConnectionRefusedError",
    ]


def test_wait_closed_waits_for_the_connections_as_this_python_does() -> None:
    """3.12's `wait_closed` waits until every connection is gone, 3.11's returns at once."""
    net = Network()
    net.host("n1")

    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.read()
        finally:  # on 3.11 the run may end first, and cancel this
            writer.close()

    async def body() -> list[str]:
        seen: list[str] = []
        server = await net.host("n1").create_task(asyncio.start_server(hold, None, 80))
        _reader, writer = await asyncio.open_connection("n1", 80)
        await asyncio.sleep(0.01)
        server.close()
        waiting = asyncio.ensure_future(server.wait_closed())
        await asyncio.sleep(0.01)
        seen.append(f"returned before the client left: {waiting.done()}")
        writer.close()
        await waiting
        return seen

    expected = sys.version_info < (3, 12)
    assert on(net, "n2", body) == [f"returned before the client left: {expected}"]


class Slow(asyncio.Protocol):
    """Pauses its reading after the first bytes, resumes at a later step."""

    def __init__(self) -> None:
        self.got: list[tuple[int, bytes]] = []
        self.done = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        loop = asyncio.get_running_loop()
        self.got.append((round(loop.time() * 1000), data))
        if len(self.got) == 1:
            self.transport.pause_reading()  # type: ignore[attr-defined]
            loop.call_later(0.5, self.transport.resume_reading)  # type: ignore[attr-defined]

    def eof_received(self) -> None:
        self.done.set_result(None)


def test_a_paused_protocol_reads_nothing_until_it_resumes() -> None:
    """Bytes arriving while paused wait, and come in one read once it resumes; the
    negative control never pauses and reads each as it comes."""
    def reads(pause: bool) -> list[tuple[int, bytes]]:
        net = Network()
        net.host("srv")

        async def body() -> list[tuple[int, bytes]]:
            protocol = Slow()
            if not pause:
                protocol.data_received = lambda data: protocol.got.append(  # type: ignore
                    (round(asyncio.get_running_loop().time() * 1000), data))
            await net.host("srv").create_task(
                loop().create_server(lambda: protocol, None, 80))
            _reader, writer = await asyncio.open_connection("srv", 80)
            for part in (b"a", b"b", b"c"):
                writer.write(part)
                await asyncio.sleep(0.1)
            writer.write_eof()
            await protocol.done
            writer.close()
            return protocol.got

        return on(net, "cli", body)  # type: ignore[no-any-return]

    assert reads(pause=True) == [(3, b"a"), (503, b"bc")]
    assert reads(pause=False) == [(3, b"a"), (103, b"b"), (203, b"c")]


def test_a_buffered_protocol_gets_its_bytes_in_its_buffer() -> None:
    net = Network()
    net.host("srv")

    class Into(asyncio.BufferedProtocol):
        def __init__(self) -> None:
            self.buffer = bytearray(4)
            self.got = bytearray()
            self.done = asyncio.get_running_loop().create_future()

        def get_buffer(self, sizehint: int) -> bytearray:
            return self.buffer

        def buffer_updated(self, nbytes: int) -> None:
            self.got += self.buffer[:nbytes]

        def eof_received(self) -> None:
            self.done.set_result(bytes(self.got))

    async def body() -> bytes:
        protocol = Into()
        await net.host("srv").create_task(loop().create_server(lambda: protocol, None, 80))
        _reader, writer = await asyncio.open_connection("srv", 80)
        writer.write(b"more than four bytes")
        writer.write_eof()
        got = await protocol.done
        writer.close()
        return got  # type: ignore[no-any-return]

    assert on(net, "cli", body) == b"more than four bytes"


def test_the_socket_check_bites() -> None:
    """Negative control of `no_real_sockets`: the stock loop, which makes real sockets,
    fails under it."""
    stock = asyncio.new_event_loop()
    try:
        with no_real_sockets(), pytest.raises(RealSocket):
            stock.run_until_complete(asyncio.open_connection("127.0.0.1", 9))
    finally:
        stock.close()
