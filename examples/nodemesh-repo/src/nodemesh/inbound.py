"""The connections peers dialled to this node: requests in, one reply out for each.

Each request is answered in a task of its own, so a call waiting for its handler's result
does not hold up the requests behind it on the same connection.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from .envelope import Envelope
from .frames import Frame, FrameError, encode, read_frame
from .settings import Settings

# (envelope, attempt, want) -> the reply frame, or None when no reply is to be sent.
Take = Callable[[Envelope, int, str], Awaitable[Frame | None]]


class Inbound:
    def __init__(self, node: str, settings: Settings, take: Take,
                 on_idle: Callable[[], None] | None = None) -> None:
        self.node = node
        self._settings = settings
        self._take = take
        self._on_idle = on_idle  # the last request being answered was answered
        self._writers: list[asyncio.StreamWriter] = []
        # Ordered sets (dicts), so they are cancelled and awaited in the order they began.
        self._serving: dict[asyncio.Task[None], None] = {}
        self._answering: dict[asyncio.Task[None], None] = {}

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """The server's callback for one accepted connection."""
        _track(self._serving, asyncio.current_task())
        self._writers.append(writer)
        try:
            while (frame := await read_frame(reader, self._settings.max_frame_bytes)) is not None:
                answering = asyncio.get_running_loop().create_task(
                    self._answer(frame, writer), name=f"answer on {self.node}")
                _track(self._answering, answering)
                answering.add_done_callback(self._answered)
        except (OSError, FrameError):
            pass  # the peer's link sees the loss and fails what it waits for
        finally:
            self._writers.remove(writer)
            writer.close()

    async def _answer(self, frame: Frame, writer: asyncio.StreamWriter) -> None:
        try:
            env = Envelope.from_wire(frame["env"])
            attempt, want = int(frame["attempt"]), str(frame["want"])
        except (KeyError, TypeError, ValueError):
            reply: Frame | None = {"outcome": "failed", "error": "Malformed"}
        else:
            reply = await self._take(env, attempt, want)
        if reply is None or writer.is_closing():
            return
        reply["cid"] = frame.get("cid")
        try:
            data = encode(reply, self._settings.max_frame_bytes)
        except (TypeError, ValueError, FrameError):  # a handler's result that is not JSON
            data = encode({"cid": frame.get("cid"), "outcome": "failed", "error": "BadReply"},
                          self._settings.max_frame_bytes)
        with contextlib.suppress(OSError):
            writer.write(data)
            await writer.drain()

    @property
    def answering(self) -> int:
        """Requests from peers this node has read and not answered yet."""
        return len(self._answering)

    def _answered(self, task: asyncio.Task[None]) -> None:
        if not self._answering and self._on_idle is not None:
            self._on_idle()

    async def close(self) -> None:
        """Close every accepted connection; its serving task then sees the end of stream."""
        for writer in list(self._writers):
            writer.close()
        answering = list(self._answering)
        for task in answering:
            task.cancel()
        await asyncio.gather(*answering, *self._serving, return_exceptions=True)


def _track(tasks: dict[asyncio.Task[None], None], task: asyncio.Task[None] | None) -> None:
    if task is not None:
        tasks[task] = None
        task.add_done_callback(lambda done: tasks.pop(done, None))
