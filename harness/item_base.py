"""The base of every harness pytest item: a failure is its own text, not a traceback.

Like pytest-mypy's items, a harness item fails with a `HarnessFailure` whose message is
the whole report (findings with source lines, or the shrunk program, reproduce blob and
diagram); the Python traceback of the harness itself would only hide it.
"""

from __future__ import annotations

from typing import Any

import pytest
from _pytest._code.code import TerminalRepr, TracebackStyle

from harness.run_key import RUN_KEY
from harness.run_state import HarnessRun

PROPERTY = "harness"  # the user_properties name of an item's result, read by the summary


class HarnessFailure(Exception):
    """A harness check failed; `str()` is the report to show."""


class HarnessItem(pytest.Item):
    """An item whose failure text is its `HarnessFailure` message."""

    def __init__(self, *, label: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.label = label  # the location shown in reports
        self.add_marker("harness")

    @property
    def run(self) -> HarnessRun:
        return self.config.stash[RUN_KEY]

    def record(self, **facts: object) -> None:
        """Attach this item's result to its report (it travels to the xdist controller)."""
        self.user_properties.append((PROPERTY, dict(facts)))

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: TracebackStyle | None = None,
    ) -> str | TerminalRepr:
        if isinstance(excinfo.value, HarnessFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, self.label
