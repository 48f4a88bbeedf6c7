"""What naming an unreachable Redis says: with the redis client (the `fuzz` extra) the
server cannot be reached; without it the database cannot be opened at all. Either is one
line naming where the URL was given, which is what the tests check."""

from __future__ import annotations

import importlib.util

UNREACHABLE = (
    "cannot reach the server" if importlib.util.find_spec("redis") is not None
    else "the redis client is not installed"
)
