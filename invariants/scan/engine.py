"""Per-file analysis and the rules' whole-tree passes: the scanner's two entry points.

`analyze_source` parses once and runs only the rules whose cheap text prefilter says they
can find something, then every enabled rule's per-file collector; it never raises on bad
input (that becomes a MESH000 finding). `tree_passes` runs the passes rule records declare.
The engine knows rules only through the registry. Nothing is imported or executed: the
source is only parsed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import libcst as cst

from invariants.scan.context import FileContext
from invariants.scan.model import FileReport, Finding, ScanConfig
from invariants.scan.names import source_lines
from invariants.scan.rules import registered
from invariants.scan.rules.spec import TreeResult
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
    rules = [rule for rule in registered() if config.enabled(rule.id)]
    for rule in rules:
        if rule.applies(ctx):
            _guarded_run(ctx, report, rule.id, rule.check)
    for rule in rules:
        if rule.collect is not None:
            _guarded_run(ctx, report, rule.id, rule.collect)
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


def tree_passes(reports: Sequence[FileReport], config: ScanConfig) -> TreeResult:
    """Every registered rule's whole-tree pass, in id order. A disabled rule's pass runs too
    (its findings are dropped later; its problems, such as the emit-site canary, stand)."""
    result = TreeResult()
    for rule in registered():
        if rule.tree_pass is not None:
            found = rule.tree_pass(reports, config)
            result.findings.extend(found.findings)
            result.problems.extend(found.problems)
    return result


def resolve_tree(reports: Sequence[FileReport], config: ScanConfig) -> list[Finding]:
    """The findings of every whole-tree pass."""
    return tree_passes(reports, config).findings
