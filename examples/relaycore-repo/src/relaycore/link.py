"""One direction of an in-memory transport pair.

`write()` lands the frame on the peer's `data_received()` after the link's latency:
with `call_soon` when there is none, else with `call_later`. The handle it returns
is what a leg keeps so the stop can cut a frame still in flight.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Protocol

from relaycore.frames import Frame

Callback = Callable[[], None]


class Receiver(Protocol):
    closed: bool

    def data_received(self, frame: Frame) -> None: ...


class Link:
    def __init__(self, loop: asyncio.AbstractEventLoop, peer: Receiver,
                 latency_ms: Callable[[], int]) -> None:
        self._loop = loop
        self._peer = peer
        self._latency_ms = latency_ms
        self.closed = False

    def write(self, frame: Frame, *, landed: Callback | None = None,
              lost: Callback | None = None, latency_ms: int | None = None) -> asyncio.Handle:
        """Send `frame`; `landed` runs after the peer took it, `lost` if the peer is gone."""
        delay = self._latency_ms() if latency_ms is None else latency_ms
        if delay <= 0:
            return self._loop.call_soon(self._land, frame, landed, lost)
        return self._loop.call_later(delay / 1000, self._land, frame, landed, lost)

    def close(self) -> None:
        self.closed = True

    def _land(self, frame: Frame, landed: Callback | None, lost: Callback | None) -> None:
        if self.closed or self._peer.closed:
            if lost is not None:
                lost()
            return
        self._peer.data_received(frame)
        if landed is not None:
            landed()
