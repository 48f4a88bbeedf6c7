"""Static-scan items: one per scanned file, one for what belongs to no file, and one per
VALID/INVALID example of each team rule (`[tool.harness] rules`).

A file's item fails with its findings, each `path:line:col MESHxxx message` and the source
line below it (suppressions and the baseline already applied), and with the problems
reported in it (malformed or unused suppressions, stale baseline entries, a team rule's
error on it). The tree item fails with the rest: the emit-site canary, a configured path
that does not exist, a stale entry of a file no longer scanned. An example's item fails when
its rule reports a valid example, or does not report an invalid one on exactly its lines.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.item_base import HarnessFailure, HarnessItem
from invariants.scan.examples import Example, failure
from invariants.scan.model import Finding
from invariants.scan.problems import Problem
from invariants.scan.report import finding_line, problem_line

SCAN_ITEM_NAME = "harness-scan"
TREE_NODEID = "harness::scan"
EXAMPLE_NODEID = "harness::rule-example[{}]"  # AIO001-valid-0, AIO001-invalid-0, ...


def failure_report(findings: list[Finding], problems: list[Problem]) -> str:
    lines = [finding_line(finding) for finding in findings]
    lines += [problem_line(problem) for problem in problems]
    count = f"{len(findings)} finding(s)"
    if problems:
        count += f", {len(problems)} error(s)"
    return "\n".join([*lines, count])


def _rules(findings: list[Finding]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for finding in findings:
        counts[finding.rule] = counts.get(finding.rule, 0) + 1
    return counts


class ScanFileItem(HarnessItem):
    """The scan of one file (`scan_path` is its path relative to the scan root)."""

    def __init__(self, *, scan_path: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scan_path = scan_path
        self.add_marker("harness_scan")

    def runtest(self) -> None:
        verdict = self.run.verdict()
        findings = verdict.findings_in(self.scan_path)
        problems = verdict.problems_in(self.scan_path)
        self.record(kind="scan", path=self.scan_path, rules=_rules(findings),
                    errors=len(problems))
        if findings or problems:
            raise HarnessFailure(failure_report(findings, problems))


class ScanTreeItem(HarnessItem):
    """Findings and problems that belong to no scanned file, and the scan's totals."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_marker("harness_scan")

    def runtest(self) -> None:
        verdict = self.run.verdict()
        findings, problems = verdict.unowned()
        stats = verdict.result.stats
        self.record(kind="scan-tree", files=stats.files, cached=stats.cached,
                    suppressed=stats.suppressed, baselined=verdict.baselined,
                    emit_sites=len(verdict.result.emit_sites), rules=_rules(findings),
                    errors=len(problems))
        if findings or problems:
            raise HarnessFailure(failure_report(findings, problems))


class RuleExampleItem(HarnessItem):
    """One VALID or INVALID example of a team rule, scanned as a file of its own."""

    def __init__(self, *, example: Example, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.example = example
        self.add_marker("harness_scan")

    def runtest(self) -> None:
        wrong = failure(self.example, self.run.settings.scan.team_rules)
        self.record(kind="rule-example", rule=self.example.rule.id, example=self.example.name,
                    holds=wrong is None)
        if wrong is not None:
            raise HarnessFailure(wrong)


def scan_nodeid(location: Path, rootdir: Path, scan_path: str) -> str:
    """`<file relative to the rootdir>::harness-scan` (the scan path when outside it)."""
    try:
        shown = location.relative_to(rootdir).as_posix()
    except ValueError:
        shown = scan_path
    return f"{shown}::{SCAN_ITEM_NAME}"
