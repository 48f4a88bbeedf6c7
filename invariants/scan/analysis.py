"""The per-file step: read, look up the cache, analyse, collect suppressions, store.

It runs in the scanning process or in a worker process alike, and never raises for a bad file.
"""

from __future__ import annotations

from invariants.scan import suppress
from invariants.scan.cache import ResultCache, entry_key
from invariants.scan.engine import analyze_source
from invariants.scan.files import SourceFile, read_source
from invariants.scan.model import FileReport, Finding, ScanConfig
from invariants.scan.outcome import FileOutcome


def analyze_file(file: SourceFile, config: ScanConfig, cache: ResultCache | None) -> FileOutcome:
    read = read_source(file, config)
    if read.source is None:
        unusable = [read.problem] if read.problem is not None else []
        return FileOutcome(FileReport(file.path, findings=unusable, parsed=False))
    key = entry_key(file.path, file.is_test, read.source, config) if cache else ""
    if cache is not None:
        hit = cache.get(key)
        if hit is not None:
            return hit
    try:
        report = analyze_source(file.path, read.source, config, is_test=file.is_test)
    except Exception as exc:  # a scanner bug must cost one file, not the run; never cached
        reason = f"scanner error: {type(exc).__name__}: {exc}".splitlines()[0]
        failed = Finding("MESH000", file.path, 1, 1, 1, reason, "", "")
        return FileOutcome(FileReport(file.path, findings=[failed], parsed=False))
    suppressions, problems = suppress.extract(file.path, read.source)
    outcome = FileOutcome(report, suppressions, problems)
    if cache is not None:
        cache.put(key, outcome)
    return outcome
