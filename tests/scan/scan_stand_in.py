"""A line-based stand-in for the rule engine, so the product layer is tested on its own terms.

A line carrying `# flag:MESHxxx` yields a finding of that rule there (its symbol is the
nearest preceding `def`); a line with `DeliveryFailure(` is an emit site, guarded when the
line above mentions `may_answer`. Undecodable sources yield MESH000, like the real engine.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import pytest

from invariants.scan import analysis, engine, runner
from invariants.scan.model import EmitSite, FileReport, Finding, ScanConfig
from invariants.scan.rules.spec import TreeResult

FLAG = re.compile(r"#\s*flag:(MESH\d{3})")
DEF = re.compile(r"\s*def (\w+)")


def analyze_source(path: str, source: bytes, config: ScanConfig, *, is_test: bool) -> FileReport:
    report = FileReport(path=path)
    try:
        lines = source.decode("utf-8").splitlines()
    except UnicodeDecodeError as exc:
        report.parsed = False
        report.findings.append(Finding("MESH000", path, 1, 1, 1, f"cannot decode: {exc}", "", ""))
        return report
    symbol = ""
    for number, line in enumerate(lines, start=1):
        defined = DEF.match(line)
        if defined:
            symbol = defined.group(1)
        flag = FLAG.search(line)
        if flag and config.enabled(flag.group(1)):
            column = len(line) - len(line.lstrip()) + 1
            report.findings.append(
                Finding(flag.group(1), path, number, column, number,
                        f"flagged {flag.group(1)}", symbol, line.strip())
            )
        if "DeliveryFailure(" in line:
            guarded = number > 1 and "may_answer" in lines[number - 2]
            report.emit_sites.append(
                EmitSite(path, number, line.index("DeliveryFailure(") + 1, symbol, guarded,
                         number - 1 if guarded else None, line.strip())
            )
    return report


def tree_passes(reports: Sequence[FileReport], config: ScanConfig) -> TreeResult:
    """No whole-tree findings; the rules' problems (the emit-site canary) still stand."""
    return TreeResult([], engine.tree_passes(reports, config).problems)


def install(monkeypatch: pytest.MonkeyPatch) -> None:
    """Route the runner through the stand-in (worker processes fork and inherit it)."""
    monkeypatch.setattr(analysis, "analyze_source", analyze_source)
    monkeypatch.setattr(runner, "tree_passes", tree_passes)
