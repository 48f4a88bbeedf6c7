"""The mesh's own log: one `Note` per thing that happened, in order.

The mesh speaks its own vocabulary here (`offered`, `spilled`, `bounced`, ...); whoever
reads the log (an operator's tooling, or the test harness's adapter) translates it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Note:
    at: int  # virtual ms
    what: str
    fields: dict[str, Any]


class Log:
    def __init__(self) -> None:
        self.notes: list[Note] = []

    def write(self, at: int, what: str, **fields: Any) -> None:
        self.notes.append(Note(at, what, fields))
