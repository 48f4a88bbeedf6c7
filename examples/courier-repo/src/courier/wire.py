"""The wire format: a 4-byte big-endian length, then one JSON object."""
from __future__ import annotations

import asyncio
import json
import struct
from typing import Any

_HEAD = struct.Struct(">I")


def pack(frame: dict[str, Any]) -> bytes:
    body = json.dumps(frame, sort_keys=True, separators=(",", ":")).encode()
    return _HEAD.pack(len(body)) + body


async def read_frame(reader: asyncio.StreamReader) -> dict[str, Any] | None:
    try:
        head = await reader.readexactly(_HEAD.size)
        (size,) = _HEAD.unpack(head)
        return json.loads(await reader.readexactly(size))
    except asyncio.IncompleteReadError:
        return None
