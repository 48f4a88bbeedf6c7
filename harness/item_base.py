"""The base of every harness pytest item: a failure is its own text, not a traceback.

Like pytest-mypy's items, a harness item fails with a `HarnessFailure` whose message is
the whole report (findings with source lines, or the shrunk program, reproduce blob and
diagram); the Python traceback of the harness itself would only hide it.
"""

from __future__ import annotations

from typing import Any

import pytest
from _pytest._code.code import TerminalRepr, Traceback, TracebackStyle

from harness.run_key import RUN_KEY
from harness.run_state import HarnessRun
from invariants.dynamic.report import HIDDEN_PACKAGES, hidden_frame

PROPERTY = "harness"  # the user_properties name of an item's result, read by the summary
# Whose frames an item's traceback leaves out: the harness's (and Hypothesis's, which
# drives each step), the plugin's, and pytest's own, which call the item.
_HIDDEN = (*HIDDEN_PACKAGES, "harness", "_pytest", "pluggy")


def _in_a_chain(exc: BaseException) -> bool:
    """`exc` raised from another exception, whose traceback shows the mesh's frames (an
    `AdapterExited` from the adapter's `SystemExit`): its own frames are all the harness's."""
    return exc.__cause__ is not None


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

    def _traceback_filter(self, excinfo: pytest.ExceptionInfo[BaseException]) -> Traceback:
        """An exception the mesh or adapter raised is shown with its own frames: the
        plugin's, the harness's, Hypothesis's and pytest's are left out (pytest's
        `--full-trace` shows them all), as pytest cuts a test function's traceback to the
        test. A traceback with no frame of the mesh's is shown whole."""
        traceback = excinfo.traceback.filter(excinfo)  # honours __tracebackhide__
        own = traceback.filter(lambda entry: not hidden_frame(str(entry.path), _HIDDEN))
        return own if own or _in_a_chain(excinfo.value) else traceback

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, self.label
