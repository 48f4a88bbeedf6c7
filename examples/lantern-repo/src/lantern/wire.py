"""The wire format: one JSON object per line (newline-delimited JSON)."""

from __future__ import annotations

import json
from typing import Any


def encode(frame: dict[str, Any]) -> bytes:
    return json.dumps(frame, separators=(",", ":"), sort_keys=True).encode() + b"\n"


def decode(line: bytes) -> dict[str, Any]:
    frame = json.loads(line)
    if not isinstance(frame, dict) or "k" not in frame:
        raise ValueError(f"not a lantern frame: {line[:60]!r}")
    return frame
