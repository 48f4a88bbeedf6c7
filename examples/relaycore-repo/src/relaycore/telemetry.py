"""What the relay reports as it works: one call per thing that happened.

The event names and field names are those of the mesh-harness trace language, so
an observer can record them as they are; the default observer ignores them.
"""

from __future__ import annotations

from typing import Protocol


class Telemetry(Protocol):
    def __call__(self, kind: str, **fields: object) -> None: ...


def quiet(kind: str, **fields: object) -> None:
    """The default observer: reports nothing."""
    del kind, fields
