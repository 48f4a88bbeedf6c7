"""The broker: one TCP connection per node; frames are forwarded by node name."""
from __future__ import annotations

import asyncio
from collections import deque

from .wire import encode, read_frame

PENDING_PER_NODE = 4096
RECENT_PER_NODE = 64


class Broker:
    def __init__(self, port: int, replay_on_reconnect: bool = False) -> None:
        self.port = port
        self.replay_on_reconnect = replay_on_reconnect
        self.recent: dict[str, deque[bytes]] = {}
        self.conns: dict[str, asyncio.StreamWriter] = {}
        self.pending: dict[str, deque[bytes]] = {}
        self.server: asyncio.AbstractServer | None = None

    async def serve(self) -> asyncio.AbstractServer:
        self.server = await asyncio.start_server(self._on_conn, None, self.port)
        return self.server

    def _write(self, name: str, data: bytes) -> None:
        writer = self.conns.get(name)
        if writer is None or writer.is_closing():
            self.pending.setdefault(name, deque(maxlen=PENDING_PER_NODE)).append(data)
            return
        try:
            writer.write(data)
            if self.replay_on_reconnect:
                self.recent.setdefault(name, deque(maxlen=RECENT_PER_NODE)).append(data)
        except (ConnectionError, OSError, RuntimeError):
            self.pending.setdefault(name, deque(maxlen=PENDING_PER_NODE)).append(data)

    async def _on_conn(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        name = None
        try:
            hello = await read_frame(reader)
            if not hello or hello.get("op") != "hello":
                return
            name = str(hello["node"])
            old = self.conns.get(name)
            self.conns[name] = writer          # a node that reconnects replaces its old connection
            if old is not None and old is not writer:
                old.close()
                if self.replay_on_reconnect:
                    # What went out on the old connection may have died with it: send it again.
                    for data in self.recent.get(name, ()):
                        writer.write(data)
            for data in self.pending.pop(name, ()):
                writer.write(data)
            while (frame := await read_frame(reader)) is not None:
                if frame.get("op") == "fwd":
                    self._write(str(frame["to"]), encode(frame))
        except (ConnectionError, OSError, ValueError):
            pass
        finally:
            if name is not None and self.conns.get(name) is writer:
                del self.conns[name]
            writer.close()
