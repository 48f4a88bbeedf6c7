"""Length-prefixed JSON frames: a 4-byte big-endian length, then that many bytes of UTF-8 JSON."""
from __future__ import annotations

import asyncio
import json
import struct
from typing import Any

MAX_FRAME = 1 << 20
_HEADER = struct.Struct(">I")


def encode(frame: dict[str, Any]) -> bytes:
    body = json.dumps(frame, separators=(",", ":"), sort_keys=True).encode()
    return _HEADER.pack(len(body)) + body


async def read_frame(reader: asyncio.StreamReader) -> dict[str, Any] | None:
    """The next frame, or None at a clean end of stream."""
    try:
        header = await reader.readexactly(_HEADER.size)
    except asyncio.IncompleteReadError as exc:
        if exc.partial:
            raise ConnectionError("stream ended inside a frame header") from exc
        return None
    (size,) = _HEADER.unpack(header)
    if size > MAX_FRAME:
        raise ConnectionError(f"frame of {size} bytes is too large")
    body = await reader.readexactly(size)
    frame = json.loads(body)
    if not isinstance(frame, dict):
        raise ConnectionError("a frame must be a JSON object")
    return frame
