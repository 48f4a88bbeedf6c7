"""The per-file steps. `prepare` runs in the scanning process: read the file and look it up in
the cache. `analyze` runs in a worker process: parse and run the rules, collect suppressions,
store the result. Neither raises for a bad file.
"""

from __future__ import annotations

from dataclasses import dataclass

from invariants.scan import suppress
from invariants.scan.cache import ResultCache, entry_key
from invariants.scan.engine import analyze_source
from invariants.scan.files import SourceFile, read_source
from invariants.scan.model import FileReport, Finding, ScanConfig
from invariants.scan.outcome import FileOutcome
from invariants.scan.problems import NOT_ANALYSED, Problem
from invariants.scan.rules import rules_of


@dataclass(frozen=True, slots=True)
class Pending:
    """A readable file the cache did not answer: work for a worker."""

    file: SourceFile
    source: bytes
    key: str  # its cache key, "" when the cache is off


def _unusable(file: SourceFile, finding: Finding) -> FileOutcome:
    return FileOutcome(FileReport(file.path, findings=[finding], parsed=False))


def _not_analysed(file: SourceFile, message: str) -> FileOutcome:
    problem = Problem(file.path, 0, NOT_ANALYSED, message)
    return FileOutcome(FileReport(file.path, parsed=False, problems=[problem]))


def prepare(
    file: SourceFile, config: ScanConfig, cache: ResultCache | None
) -> FileOutcome | Pending:
    """The finished outcome when the file is unusable or cached, else the work left to do."""
    read = read_source(file, config)
    if read.skipped is not None:
        return FileOutcome(FileReport(file.path, parsed=False, problems=[read.skipped]))
    if read.source is None:
        problem = read.problem or Finding("MESH000", file.path, 1, 1, 1, "cannot read", "", "")
        return _unusable(file, problem)
    if cache is None:
        return Pending(file, read.source, "")
    key = entry_key(file.path, file.is_test, read.source, config)
    return cache.get(key) or Pending(file, read.source, key)


def analyze(work: Pending, config: ScanConfig, cache: ResultCache | None) -> FileOutcome:
    path = work.file.path
    try:
        report = analyze_source(path, work.source, config, is_test=work.file.is_test)
    except Exception as exc:  # a scanner bug must cost one file, not the run; never cached
        reason = f"not analysed: scanner error: {type(exc).__name__}: {exc}".splitlines()[0]
        return _not_analysed(work.file, reason)
    suppressions, problems = suppress.extract(path, work.source, rules_of(config))
    outcome = FileOutcome(report, suppressions, problems)
    if cache is not None and work.key:
        cache.put(work.key, outcome)
    return outcome


def crashed(work: Pending) -> FileOutcome:
    """The outcome of a file whose analysis killed its worker process (a native parser crash,
    e.g. a stack overflow on pathologically deep nesting)."""
    # Only files CPython accepted reach the parser, so this is never a MESH000 finding.
    message = "not analysed: the parser crashed on this file (its worker process died)"
    return _not_analysed(work.file, message)
