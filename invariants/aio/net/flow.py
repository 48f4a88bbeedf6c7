"""Write flow control, as asyncio's transports do it: past the high-water mark of bytes
buffered the protocol is paused (`pause_writing`, which holds `StreamWriter.drain`), at or
below the low-water mark resumed."""

from __future__ import annotations

import asyncio
from typing import Any

HIGH_WATER = 64 * 1024


class WriteLimits:
    """The marks, and whether the protocol is paused now."""

    def __init__(self) -> None:
        self.high, self.low = HIGH_WATER, HIGH_WATER // 4
        self.paused = False

    def set(self, high: int | None = None, low: int | None = None) -> None:
        if high is None:
            high = 4 * low if low is not None else HIGH_WATER
        if low is None:
            low = high // 4
        if not high >= low >= 0:
            raise ValueError(f"high ({high!r}) must be >= low ({low!r}) must be >= 0")
        self.high, self.low = high, low

    def grew(self, size: int, transport: asyncio.BaseTransport, protocol: Any,
             loop: asyncio.AbstractEventLoop) -> None:
        if size > self.high and not self.paused:
            self.paused = True
            _call(protocol.pause_writing, "pause_writing", transport, protocol, loop)

    def shrank(self, size: int, transport: asyncio.BaseTransport, protocol: Any,
               loop: asyncio.AbstractEventLoop) -> None:
        if self.paused and size <= self.low:
            self.paused = False
            _call(protocol.resume_writing, "resume_writing", transport, protocol, loop)


def _call(method: Any, name: str, transport: asyncio.BaseTransport, protocol: Any,
          loop: asyncio.AbstractEventLoop) -> None:
    try:
        method()
    except (SystemExit, KeyboardInterrupt):
        raise
    except BaseException as exc:
        loop.call_exception_handler({
            "message": f"protocol.{name}() failed", "exception": exc,
            "transport": transport, "protocol": protocol,
        })
