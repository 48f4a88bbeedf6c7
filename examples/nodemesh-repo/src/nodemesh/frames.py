"""Length-prefixed JSON frames: a 4-byte big-endian length, then that many bytes of JSON."""

from __future__ import annotations

import asyncio
import json
import struct
from typing import Any

Frame = dict[str, Any]
_HEADER = struct.Struct(">I")


class FrameError(Exception):
    """A frame that is too large or not a JSON object: the connection is not to be trusted."""


def encode(frame: Frame, max_bytes: int) -> bytes:
    payload = json.dumps(frame, separators=(",", ":"), sort_keys=True).encode()
    if len(payload) > max_bytes:
        raise FrameError(f"frame of {len(payload)} bytes exceeds {max_bytes}")
    return _HEADER.pack(len(payload)) + payload


async def read_frame(reader: asyncio.StreamReader, max_bytes: int) -> Frame | None:
    """The next frame, or None at a clean end of stream (between frames)."""
    try:
        header = await reader.readexactly(_HEADER.size)
    except asyncio.IncompleteReadError as exc:
        if exc.partial:
            raise FrameError("stream ended inside a frame header") from exc
        return None
    (size,) = _HEADER.unpack(header)
    if size > max_bytes:
        raise FrameError(f"frame of {size} bytes exceeds {max_bytes}")
    try:
        payload = await reader.readexactly(size)
    except asyncio.IncompleteReadError as exc:
        raise FrameError("stream ended inside a frame") from exc
    try:
        frame = json.loads(payload)
    except ValueError as exc:
        raise FrameError(f"frame is not JSON: {exc}") from exc
    if not isinstance(frame, dict):
        raise FrameError("frame is not a JSON object")
    return frame
