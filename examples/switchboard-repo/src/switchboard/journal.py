"""The switchboard's journal: one entry per thing that happened, handed to an optional sink.

Production runs with no sink (or one that counts); the harness adapter installs one that
translates entries into mesh-harness trace events.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Sink = Callable[[str, dict[str, Any]], None]


class Journal:
    """Entries are an event name and keyword fields, in the switchboard's own vocabulary."""

    __slots__ = ("sink",)

    def __init__(self, sink: Sink | None = None) -> None:
        self.sink = sink

    def note(self, event: str, **fields: Any) -> None:
        if self.sink is not None:
            self.sink(event, fields)
