"""Per-file analysis and the tree-level MESH001 pass: the scanner's two entry points."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from invariants.scan.model import FileReport, Finding, ScanConfig


def analyze_source(path: str, source: bytes, config: ScanConfig, *, is_test: bool) -> FileReport:
    """Parse `source` once and run every enabled rule that can apply. Never raises on bad input."""
    report = FileReport(path=path)
    try:
        cst.parse_module(source)
    except (cst.ParserSyntaxError, RecursionError, ValueError, UnicodeDecodeError) as exc:
        report.parsed = False
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        report.findings.append(
            Finding("MESH000", path, 1, 1, 1, f"cannot parse: {message}", "", "")
        )
    return report


def resolve_tree(reports: Sequence[FileReport], config: ScanConfig) -> list[Finding]:
    """The tree-level MESH001 pass over every file's emit sites and call sites."""
    return []
