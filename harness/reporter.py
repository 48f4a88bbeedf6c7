"""The harness's per-session listener: gathers item results, writes SARIF, prints the summary.

Registered as a plugin object only in runs that collect harness items.
"""

from __future__ import annotations

import signal
from collections.abc import Mapping

import pytest

from harness.item_base import PROPERTY
from harness.run_state import HarnessRun
from harness.summary import Summary
from invariants import interrupts
from invariants.scan.sarif import to_sarif


class HarnessReporter:
    def __init__(self, run: HarnessRun) -> None:
        self.run = run
        self.summary = Summary()
        self.sarif_error: str | None = None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call":  # every phase's report carries the same properties
            return
        for name, value in report.user_properties:
            if name == PROPERTY and isinstance(value, Mapping):
                self.summary.add(value)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        target = self.run.settings.sarif
        # An xdist worker scans for its own items; the controller (or a plain run) writes.
        if target is None or hasattr(session.config, "workerinput"):
            return
        if interrupts.received() is not None:  # no scan to finish, no report of one
            return
        verdict = self.run.verdict()
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(
                to_sarif(verdict.findings, verdict.problems, verdict.result.root,
                         verdict.result.rules), encoding="utf-8"
            )
        except OSError as exc:
            reason = exc.strerror or str(exc)
            self.sarif_error = f"mesh-harness: cannot write SARIF to {target}: {reason}"
            session.exitstatus = pytest.ExitCode.USAGE_ERROR

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        signum = interrupts.received()
        if (self.summary.empty() and self.sarif_error is None and self.run.settings.sarif is None
                and signum is None):
            return
        terminalreporter.section("mesh-harness")
        for line in self.summary.lines():
            terminalreporter.line(line)
        if signum is not None:
            unwritten = ", no SARIF written" if self.run.settings.sarif is not None else ""
            terminalreporter.line(f"mesh-harness: interrupted ({signal.Signals(signum).name}): "
                                  f"the run is incomplete, no verdict{unwritten}", red=True)
        elif self.sarif_error is not None:
            terminalreporter.line(self.sarif_error, red=True)
        elif self.run.settings.sarif is not None:
            terminalreporter.line(f"SARIF written to {self.run.settings.sarif}")
