"""Text and JSON renderings of a scan result (SARIF lives in `sarif`)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from invariants.scan.model import EmitSite, Finding
from invariants.scan.problems import EMIT_SITE_COUNT, Problem
from invariants.scan.runner import ScanResult, ScanStats


def finding_to_json(finding: Finding) -> dict[str, object]:
    return {
        "rule": finding.rule,
        "path": finding.path,
        "line": finding.line,
        "column": finding.column,
        "end_line": finding.end_line,
        "message": finding.message,
        "symbol": finding.symbol,
    }


def stats_to_json(stats: ScanStats) -> dict[str, object]:
    return {
        "files": stats.files,
        "parsed": stats.parsed,
        "cached": stats.cached,
        "seconds": stats.seconds,
    }


def to_json(findings: Sequence[Finding], errors: Sequence[Problem], stats: ScanStats) -> str:
    """`{"findings": [...], "errors": [...], "stats": {...}}`, keys in a fixed order."""
    document = {
        "findings": [finding_to_json(finding) for finding in findings],
        "errors": [problem.to_json() for problem in errors],
        "stats": stats_to_json(stats),
    }
    return json.dumps(document, indent=2) + "\n"


# Source lines longer than this are cut in text output (generated code can have huge lines).
MAX_SNIPPET_CHARS = 160


def finding_line(finding: Finding) -> str:
    """`path:line:col MESHxxx message`, then the source line indented below it."""
    head = f"{finding.path}:{finding.line}:{finding.column} {finding.rule} {finding.message}"
    snippet = finding.snippet.strip()
    if len(snippet) > MAX_SNIPPET_CHARS:
        snippet = snippet[: MAX_SNIPPET_CHARS - 3] + "..."
    return f"{head}\n    {snippet}" if snippet else head


def problem_line(problem: Problem) -> str:
    where = problem.path or "<scan>"
    if problem.line:
        where += f":{problem.line}"
    return f"{where} error[{problem.kind}] {problem.message}"


def to_text(
    findings: Sequence[Finding], errors: Sequence[Problem], stats: ScanStats, *, baselined: int = 0
) -> str:
    lines = [finding_line(finding) for finding in findings]
    lines += [problem_line(problem) for problem in errors]
    summary = (
        f"{len(findings)} finding(s), {len(errors)} error(s) in {stats.files} file(s) "
        f"({stats.parsed} parsed, {stats.cached} cached, {stats.suppressed} suppressed"
    )
    summary += f", {baselined} baselined)" if baselined else ")"
    lines.append(summary)
    return "\n".join(lines) + "\n"


def emit_site_to_json(site: EmitSite) -> dict[str, object]:
    return {
        "path": site.path,
        "line": site.line,
        "column": site.column,
        "symbol": site.symbol,
        "guarded": site.guarded,
        "guard_line": site.guard_line,
    }


def inventory_text(result: ScanResult) -> str:
    """One line per emit site: where, in which function, and what guards it."""
    lines = []
    for site in result.emit_sites:
        status = f"guarded (line {site.guard_line})" if site.guarded else "UNGUARDED"
        symbol = site.symbol or "<module>"
        lines.append(f"{site.path}:{site.line}:{site.column} {symbol} {status}")
    lines += [problem_line(problem) for problem in result.errors if problem.kind == EMIT_SITE_COUNT]
    lines.append(f"{len(result.emit_sites)} emit site(s)")
    return "\n".join(lines) + "\n"


def inventory_json(result: ScanResult) -> str:
    document = {
        "emit_sites": [emit_site_to_json(site) for site in result.emit_sites],
        "count": len(result.emit_sites),
        "errors": [p.to_json() for p in result.errors if p.kind == EMIT_SITE_COUNT],
    }
    return json.dumps(document, indent=2) + "\n"
