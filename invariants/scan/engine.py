"""Per-file analysis and the rules' whole-tree passes: the scanner's two entry points.

`analyze_source` runs only the rules whose cheap text prefilter says they can find
something, then every enabled rule's per-file collector, and parses the file with libcst
only when one of them needs the tree; it never raises on bad input (that becomes a MESH000
finding). `tree_passes` runs the passes rule records declare.
The engine knows rules only through the registry and the configuration's team rules
(`rules_of`). Nothing is imported or executed: the source is only parsed. A team rule that
raises is that rule's error for that file (or for its whole-tree pass), with its traceback.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Sequence

import libcst as cst

from invariants.scan.context import FileContext
from invariants.scan.model import FileReport, Finding, ScanConfig
from invariants.scan.names import source_lines
from invariants.scan.problems import NOT_ANALYSED, RULE_ERROR, Problem
from invariants.scan.rules import registered, rules_of
from invariants.scan.rules.spec import Rule, TreeResult
from invariants.scan.source import SourceProblem, cpython_verdict, screen, source_text


def _problem(path: str, problem: SourceProblem, text: str | None = None) -> Finding:
    lines = source_lines(text) if text is not None else []
    snippet = lines[problem.line - 1].strip()[:200] if 0 < problem.line <= len(lines) else ""
    return Finding(
        "MESH000", path, problem.line, problem.column, problem.line, problem.message, "", snippet
    )


def _not_analysed(path: str, why: str, line: int = 0) -> Problem:
    return Problem(path, line, NOT_ANALYSED, f"not analysed: {why}")


def _parse(text: str) -> cst.Module | tuple[str, int]:
    """The tree, or why libcst refused a file CPython accepted (and the line)."""
    try:
        return cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        return f"libcst cannot parse it: {exc.message}", exc.raw_line
    except (RecursionError, MemoryError, ValueError, SyntaxError) as exc:
        return f"libcst cannot parse it: {type(exc).__name__}: {exc}", 0


def analyze_source(
    path: str, source: bytes, config: ScanConfig, *, is_test: bool, prefilter: bool = True
) -> FileReport:
    """Run every enabled rule that can apply to `source`. Never raises on bad input.

    MESH000 is CPython's verdict (compile() rejects the file). libcst parses the file only
    when a rule's check or collector needs its tree: a file whose text no enabled rule's
    prefilter matches is answered from the text (`prefilter=False` parses every file and
    runs every check, for comparison). A file handed to libcst that libcst or its screens
    refuse is "not analysed", a scan error and not a finding."""
    report = FileReport(path=path)
    if len(source) > config.max_file_bytes:  # the scan's own limit, as in `files.read_source`
        report.parsed = False
        why = f"file is {len(source)} bytes, over max_file_bytes={config.max_file_bytes}"
        report.problems.append(_not_analysed(path, why))
        return report
    rejected = cpython_verdict(source, path)
    if rejected is not None:
        report.parsed = False
        report.findings.append(_problem(path, rejected, source.decode("utf-8", "replace")))
        return report
    ctx = FileContext(path, source_text(source), config, is_test)
    rules = [rule for rule in rules_of(config) if config.enabled(rule.id)]
    checking = [rule for rule in rules if _checks(rule, ctx, report, prefilter)]
    if _needs_tree(ctx, rules, checking) or not prefilter:
        refused = _build_tree(ctx, source)
        if refused is not None:
            report.parsed = False
            report.problems.append(_not_analysed(path, *refused))
            return report
        report.tree_built = True
    for rule in checking:
        _guarded_run(ctx, report, rule.id, rule.check, team=_is_team(rule))
    for rule in rules:
        if rule.collect is not None:
            _guarded_run(ctx, report, rule.id, rule.collect, team=_is_team(rule))
    try:
        ctx.finish(report)
    except RecursionError:
        report.problems.append(_not_analysed(path, "the file nests too deeply to place findings"))
    return report


def _is_team(rule: Rule) -> bool:
    return all(rule is not builtin for builtin in registered())


def _may_fire(rule: Rule, ctx: FileContext, prefilter: bool) -> bool:
    return not prefilter or rule.prefilter is None or rule.prefilter(ctx)


def _checks(rule: Rule, ctx: FileContext, report: FileReport, prefilter: bool) -> bool:
    """Whether the rule's check runs on this file. A team rule whose `applies` or
    `prefilter` raises does not run: that is its error for the file."""
    try:
        return rule.applies(ctx) and _may_fire(rule, ctx, prefilter)
    except Exception as exc:
        if not _is_team(rule):
            raise
        report.problems.append(rule_error(ctx.path, f"{rule.id} failed on this file", exc))
        return False


def _collect_reads_tree(rule: Rule, ctx: FileContext) -> bool:
    if rule.collect_reads_tree is None:
        return True
    try:
        return rule.collect_reads_tree(ctx)
    except Exception:
        if not _is_team(rule):
            raise
        return True  # the tree, then: its collector runs guarded, and says what is wrong


def _needs_tree(ctx: FileContext, rules: Sequence[Rule], checking: Sequence[Rule]) -> bool:
    """Does a check that will run, or a collector, read libcst's tree of this file?"""
    if any(rule.reads_tree for rule in checking):
        return True
    return any(rule.collect is not None and _collect_reads_tree(rule, ctx) for rule in rules)


def _build_tree(ctx: FileContext, source: bytes) -> tuple[str, int] | None:
    """Attach libcst's tree to `ctx`; else why it was refused (and the line)."""
    refused = screen(source)
    module = _parse(ctx.text) if refused is None else (refused.message, refused.line)
    if not isinstance(module, cst.Module):
        return module
    ctx.attach(module)
    return None


def rule_error(path: str, what: str, exc: BaseException) -> Problem:
    """A team rule's exception as its error: the first line says which rule failed where,
    the traceback below starts at the rule's own code (the engine's frame left out)."""
    frames = exc.__traceback__.tb_next if exc.__traceback__ is not None else None
    shown = "".join(traceback.format_exception(type(exc), exc, frames)).rstrip()
    head = f"{what}: {type(exc).__name__}: {exc}".splitlines()[0]
    return Problem(path, 0, RULE_ERROR, f"{head}\n{shown}")


def _guarded_run(
    ctx: FileContext, report: FileReport, rule: str, work: Callable[[FileContext], None],
    *, team: bool = False,
) -> None:
    """Run one rule; a pathological file or a rule defect costs that rule, not the scan."""
    try:
        work(ctx)
    except RecursionError:
        report.problems.append(
            _not_analysed(ctx.path, f"{rule} skipped: the file nests too deeply")
        )
    except Exception as exc:  # keep scanning the other rules and files
        if team:  # the team's own code: its traceback is what they need to fix it
            report.problems.append(rule_error(ctx.path, f"{rule} failed on this file", exc))
            return
        why = f"{rule} failed: {type(exc).__name__}: {exc}".splitlines()[0]
        report.problems.append(_not_analysed(ctx.path, why))


def tree_passes(reports: Sequence[FileReport], config: ScanConfig) -> TreeResult:
    """Every rule's whole-tree pass, the built-in ones in id order, then the team's. A
    disabled rule's pass runs too (its findings are dropped later; its problems, such as the
    emit-site canary, stand). A team rule's pass that raises is that rule's error."""
    result = TreeResult()
    for rule in rules_of(config):
        if rule.tree_pass is None:
            continue
        try:
            found = rule.tree_pass(reports, config)
        except Exception as exc:
            if not _is_team(rule):
                raise
            result.problems.append(rule_error("", f"{rule.id} failed in its whole-tree pass", exc))
            continue
        result.findings.extend(found.findings)
        result.problems.extend(found.problems)
    return result
