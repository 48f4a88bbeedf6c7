"""Per-file analysis and the tree-level MESH001 pass: the scanner's two entry points.

`analyze_source` parses once and runs only the rules whose cheap text prefilter says they
can find something; it never raises on bad input (that becomes a MESH000 finding).
Nothing is imported or executed: the source is only parsed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import libcst as cst

from invariants.scan.callgraph import resolve_emit_sites
from invariants.scan.callsites import collect_call_sites
from invariants.scan.context import FileContext
from invariants.scan.model import FileReport, Finding, ScanConfig
from invariants.scan.names import source_lines
from invariants.scan.rules import ALL_RULES
from invariants.scan.source import SourceProblem, cpython_syntax_problem, decode_source


def _problem(path: str, problem: SourceProblem, text: str | None = None) -> Finding:
    lines = source_lines(text) if text is not None else []
    snippet = lines[problem.line - 1].strip()[:200] if 0 < problem.line <= len(lines) else ""
    return Finding(
        "MESH000", path, problem.line, problem.column, problem.line, problem.message, "", snippet
    )


def _parse(text: str) -> cst.Module | SourceProblem:
    try:
        return cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        # CPython places syntax errors better than libcst does.
        better = cpython_syntax_problem(text)
        return better or SourceProblem(
            f"syntax error: {exc.message}", exc.raw_line, exc.raw_column + 1
        )
    except (RecursionError, MemoryError, ValueError) as exc:
        return SourceProblem(f"cannot parse: {type(exc).__name__}: {exc}")


def analyze_source(path: str, source: bytes, config: ScanConfig, *, is_test: bool) -> FileReport:
    """Parse `source` once and run every enabled rule that can apply. Never raises on bad input."""
    report = FileReport(path=path)
    text = decode_source(source, config.max_file_bytes)
    module = text if isinstance(text, SourceProblem) else _parse(text)
    if isinstance(module, SourceProblem) or isinstance(text, SourceProblem):
        report.parsed = False
        problem = module if isinstance(module, SourceProblem) else text
        assert isinstance(problem, SourceProblem)
        report.findings.append(_problem(path, problem, source.decode("utf-8", "replace")))
        return report
    ctx = FileContext(path, text, module, config, is_test)
    for rule in ALL_RULES:
        if config.enabled(rule.id) and rule.applies(ctx):
            _guarded_run(ctx, report, rule.id, rule.check)
    if config.enabled("MESH001"):
        _guarded_run(ctx, report, "MESH001", collect_call_sites)
    try:
        ctx.finish(report)
    except RecursionError:
        report.findings.append(
            _problem(path, SourceProblem("file nests too deeply to place findings"))
        )
    return report


def _guarded_run(
    ctx: FileContext, report: FileReport, rule: str, work: Callable[[FileContext], None]
) -> None:
    """Run one rule; a pathological file or a rule defect costs that rule, not the scan."""
    try:
        work(ctx)
    except RecursionError:
        report.findings.append(
            _problem(ctx.path, SourceProblem(f"{rule} skipped: the file nests too deeply"))
        )
    except Exception as exc:  # keep scanning the other rules and files
        report.findings.append(
            _problem(ctx.path, SourceProblem(f"{rule} failed: {type(exc).__name__}: {exc}"))
        )


def resolve_tree(reports: Sequence[FileReport], config: ScanConfig) -> list[Finding]:
    """The tree-level MESH001 pass: unguarded emit sites not vouched for by every caller."""
    return resolve_emit_sites(reports, config)
