"""Stream programs that run unchanged on the stock loop with real loopback sockets and on
the virtual loop with a simulated network, each returning a transcript of what its ends
saw (bytes, ends of stream, errors by type and errno).

A program is given a `Place`: where its hosts are (`address`) and how code runs on one
(`on`). On the stock loop every host is 127.0.0.1 and `on` is `create_task`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from invariants.aio.net import Network

Transcript = list[str]


@dataclass(frozen=True)
class Place:
    on: Callable[[str, Coroutine[Any, Any, Any]], asyncio.Task[Any]]
    address: Callable[[str], str]
    bind: str | None  # the address servers bind to (None: every address of their host)


def stock_place() -> Place:
    return Place(lambda _host, coro: asyncio.get_running_loop().create_task(coro),
                 lambda _host: "127.0.0.1", "127.0.0.1")


def net_place(net: Network) -> Place:
    return Place(lambda host, coro: net.host(host).create_task(coro), lambda host: host, None)


def error(exc: BaseException) -> str:
    errno = getattr(exc, "errno", None)
    return f"{type(exc).__name__}({errno})" if errno is not None else type(exc).__name__


async def serve(place: Place, host: str, handler: Callable[..., Any]) -> tuple[Any, int]:
    """A server on `host`, and its port."""
    async def start() -> Any:
        return await asyncio.start_server(handler, place.bind, 0)

    server = await place.on(host, start())
    return server, server.sockets[0].getsockname()[1]


async def stop(server: Any) -> None:
    server.close()
    await server.wait_closed()


async def echo(place: Place) -> Transcript:
    """Three messages echoed upper-cased, a half-close, the server's last words and its
    close, the client's end of stream."""
    seen: Transcript = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while data := await reader.read(100):
            writer.write(data.upper())
            await writer.drain()
        seen.append("server: end of stream")
        writer.write(b"last words")
        writer.close()
        await writer.wait_closed()

    server, port = await serve(place, "srv", handle)

    async def client() -> None:
        reader, writer = await asyncio.open_connection(place.address("srv"), port)
        for message in (b"hello", b"wide", b"world"):
            writer.write(message)
            await writer.drain()
            seen.append(f"client: {(await reader.readexactly(len(message))).decode()}")
        writer.write_eof()
        seen.append(f"client: {(await reader.read()).decode()}, then end of stream")
        writer.close()
        await writer.wait_closed()

    await place.on("cli", client())
    await stop(server)
    return seen


async def chat(place: Place) -> Transcript:
    """Two clients take turns; the server sends every line to both, so each sees the
    conversation in the order it was said."""
    seen: Transcript = []
    writers: list[asyncio.StreamWriter] = []
    joined, left = asyncio.Event(), asyncio.Event()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writers.append(writer)
        if len(writers) == 2:
            joined.set()
        try:
            while line := await reader.readline():
                for each in writers:
                    each.write(line)
                    await each.drain()
        finally:  # a run stopped half-way (a replay that diverged) leaves nothing open
            writers.remove(writer)
            writer.close()
        await writer.wait_closed()
        if not writers:
            left.set()

    server, port = await serve(place, "srv", handle)

    async def talker(name: str, lines: list[str], turn: asyncio.Queue[str],
                     other: asyncio.Queue[str]) -> None:
        reader, writer = await asyncio.open_connection(place.address("srv"), port)
        heard = []
        try:
            await joined.wait()
            for index in range(len(lines) * 2):
                if (index % 2 == 0) == (name == "ann"):
                    await turn.get()
                    writer.write(f"{name}: {lines[index // 2]}\n".encode())
                    await writer.drain()
                heard.append((await reader.readline()).decode().strip())
                if (index % 2 == 0) == (name == "ann"):
                    await other.put("go")
        finally:
            writer.close()
        seen.append(f"{name} heard {heard}")
        await writer.wait_closed()

    ann_turn: asyncio.Queue[str] = asyncio.Queue()
    bob_turn: asyncio.Queue[str] = asyncio.Queue()
    await ann_turn.put("go")
    await asyncio.gather(
        place.on("ann", talker("ann", ["hi", "how are you", "bye"], ann_turn, bob_turn)),
        place.on("bob", talker("bob", ["hello", "fine", "bye now"], bob_turn, ann_turn)),
    )
    await left.wait()
    await stop(server)
    return sorted(seen)  # who finishes first is timing


async def closed_peer(place: Place) -> Transcript:
    """The server says goodbye and closes; the client reads to the end of stream, writes
    (answered by a reset), does one round trip elsewhere, and writes again: that write
    meets the reset, as a broken pipe."""
    seen: Transcript = []

    async def goodbye(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"bye")
        writer.close()
        await writer.wait_closed()

    async def pong(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(await reader.readexactly(4))
        writer.close()
        await writer.wait_closed()

    server, port = await serve(place, "srv", goodbye)
    other, other_port = await serve(place, "srv", pong)

    async def client() -> None:
        reader, writer = await asyncio.open_connection(place.address("srv"), port)
        seen.append(f"read {await reader.read()!r}")
        writer.write(b"x")
        await writer.drain()
        seen.append("first write drained")
        r2, w2 = await asyncio.open_connection(place.address("srv"), other_port)
        w2.write(b"ping")
        seen.append(f"elsewhere {await r2.readexactly(4)!r}")
        w2.close()
        await w2.wait_closed()
        writer.write(b"y")
        try:
            await writer.drain()
            seen.append("second write drained")
        except OSError as exc:
            seen.append(f"second drain: {error(exc)}")
        try:
            seen.append(f"read {await reader.read()!r}")
        except OSError as exc:
            seen.append(f"read: {error(exc)}")
        writer.close()
        try:
            await writer.wait_closed()
        except OSError as exc:
            seen.append(f"wait_closed: {error(exc)}")

    await place.on("cli", client())
    await stop(server)
    await stop(other)
    return seen


async def refused(place: Place) -> Transcript:
    """A connection to a port nobody listens on (any longer) is refused."""
    server, port = await serve(place, "srv", lambda r, w: None)
    await stop(server)

    async def client() -> str:
        try:
            await asyncio.open_connection(place.address("srv"), port)
        except OSError as exc:
            return error(exc)
        return "connected"

    return [await place.on("cli", client())]


async def aborted(place: Place) -> Transcript:
    """The client aborts with bytes buffered: what it had sent arrives, then the end of
    stream; its buffer never does."""
    seen: Transcript = []
    done = asyncio.Event()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(f"server read {await reader.read()!r}")
        writer.close()
        await writer.wait_closed()
        done.set()

    server, port = await serve(place, "srv", handle)

    async def client() -> None:
        _reader, writer = await asyncio.open_connection(place.address("srv"), port)
        writer.write(b"sent")
        await writer.drain()
        writer.transport.abort()
        seen.append(f"client closing {writer.is_closing()}")
        await writer.wait_closed()

    await place.on("cli", client())
    await done.wait()
    await stop(server)
    return seen


async def burst(place: Place) -> Transcript:
    """Twenty lines written at once, then the end of stream: the server reads them all, in
    order, however the network delays each segment."""
    received: list[bytes] = []
    done = asyncio.Event()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        received.append(await reader.read())
        writer.close()
        await writer.wait_closed()
        done.set()

    server, port = await serve(place, "srv", handle)

    async def client() -> None:
        reader, writer = await asyncio.open_connection(place.address("srv"), port)
        for index in range(20):
            writer.write(f"line {index}\n".encode())
        writer.write_eof()
        await writer.drain()
        await reader.read()
        writer.close()
        await writer.wait_closed()

    await place.on("cli", client())
    await done.wait()
    await stop(server)
    return [line.decode() for line in b"".join(received).splitlines()]


async def flushed(place: Place) -> Transcript:
    """A megabyte written and closed at once: `close` flushes it all before the end of
    stream (on the virtual loop most of it is still buffered at the close)."""
    received = bytearray()
    done = asyncio.Event()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        received.extend(await reader.read())
        writer.close()
        await writer.wait_closed()
        done.set()

    server, port = await serve(place, "srv", handle)

    async def client() -> None:
        _reader, writer = await asyncio.open_connection(place.address("srv"), port)
        writer.write(pattern(0, 1 << 20))
        writer.close()
        await writer.wait_closed()

    await place.on("cli", client())
    await done.wait()
    await stop(server)
    return [f"server read {len(received)} bytes, intact: "
            f"{bytes(received) == pattern(0, 1 << 20)}"]


async def reset_while_closing(place: Place) -> Transcript:
    """The client closes with bytes its peer has not read still in its buffer; the peer
    then aborts: the reset ends the client's close, as a real socket's failing write does
    (nothing else would: a closing transport reads no more)."""
    seen: Transcript = []
    closing = asyncio.Event()
    done = asyncio.Event()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await closing.wait()  # never reads: the client's bytes stay unsent
        writer.transport.abort()
        done.set()

    server, port = await serve(place, "srv", handle)

    async def client() -> None:
        _reader, writer = await asyncio.open_connection(place.address("srv"), port)
        writer.write(pattern(0, 64 << 20))  # past what any socket buffer takes
        writer.close()
        seen.append(f"client buffered at close: {writer.transport.get_write_buffer_size() > 0}")
        closing.set()
        try:
            await writer.wait_closed()
            seen.append("client closed")
        except (ConnectionResetError, BrokenPipeError):
            # Which of the two depends on whether the peer's end of stream came first.
            seen.append("client closed by the reset")

    await place.on("cli", client())
    await done.wait()
    await stop(server)
    return seen


def pattern(offset: int, size: int) -> bytes:
    """`size` bytes of a pattern that tells every block from its neighbours."""
    return bytes([(offset // size) % 251]) * size


async def flow(place: Place, total: int, block: int = 16 * 1024) -> Transcript:
    """A writer of `total` bytes against a reader that reads nothing until the writer is
    paused (or done): whether the writer was paused, and whether every byte came, in
    order."""
    pauses = [0]
    received = bytearray()
    reading, done = asyncio.Event(), asyncio.Event()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reading.wait()
        while data := await reader.read(1 << 16):
            received.extend(data)
        writer.close()
        await writer.wait_closed()
        done.set()

    server, port = await serve(place, "srv", handle)

    async def writer_task() -> None:
        reader, writer = await asyncio.open_connection(place.address("srv"), port)
        protocol = writer.transport.get_protocol()
        pause = protocol.pause_writing

        def counted() -> None:
            pauses[0] += 1
            pause()

        protocol.pause_writing = counted  # type: ignore[method-assign]
        for offset in range(0, total, block):
            writer.write(pattern(offset, block))
            if pauses[0]:
                reading.set()
            await writer.drain()
        reading.set()
        writer.write_eof()
        await reader.read()
        writer.close()
        await writer.wait_closed()

    await place.on("cli", writer_task())
    await done.wait()
    await stop(server)
    expected = b"".join(pattern(offset, block) for offset in range(0, total, block))
    return [f"writer paused: {pauses[0] > 0}", f"bytes intact: {bytes(received) == expected}"]


PROGRAMS = {"echo": echo, "chat": chat, "closed_peer": closed_peer, "refused": refused,
            "aborted": aborted, "burst": burst, "flushed": flushed,
            "reset_while_closing": reset_while_closing}
