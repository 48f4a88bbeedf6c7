"""Scan a tree: discover files, analyse each (cached, optionally in worker processes), then the
rules' whole-tree passes and the suppressions. The library entry point is `scan`."""

from __future__ import annotations

import dataclasses
import faulthandler
import gc
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path

from invariants import interrupts
from invariants.scan import suppress
from invariants.scan.analysis import Pending, analyze, crashed, prepare
from invariants.scan.cache import ResultCache
from invariants.scan.engine import tree_passes
from invariants.scan.files import SourceFile, discover
from invariants.scan.model import EmitSite, Finding, ScanConfig
from invariants.scan.outcome import FileOutcome
from invariants.scan.problems import Problem
from invariants.scan.rules import rules_of
from invariants.scan.rules.spec import Rule

# Tasks per worker: enough to even out uneven files, few enough to keep pickling overhead low.
CHUNKS_PER_JOB = 4


@dataclass(frozen=True, slots=True)
class ScanStats:
    files: int  # files discovered
    parsed: int  # files the parser accepted
    cached: int  # files served from the cache
    seconds: float  # elapsed, for people; never used in a decision
    suppressed: int = 0  # findings silenced by inline suppressions
    # files libcst parsed in this run: those a rule needed the tree of (the others were
    # answered from their text, from the cache, or by CPython's verdict)
    cst_parsed: int = 0


@dataclass(slots=True)
class ScanResult:
    root: Path
    findings: list[Finding]
    emit_sites: list[EmitSite]
    errors: list[Problem]
    stats: ScanStats
    scanned_paths: list[str] = field(default_factory=list)
    # The rules the scan knew: the built-in ones, then the team's (for SARIF's rule list).
    rules: tuple[Rule, ...] = ()


def finding_order(finding: Finding) -> tuple[str, int, int, str, str]:
    return (finding.path, finding.line, finding.column, finding.rule, finding.message)


def _chunks(work: Sequence[Pending], count: int) -> list[list[Pending]]:
    """Split into at most `count` chunks of similar total size (largest file first, to the
    lightest chunk), so no worker is left with the long tail."""
    bins: list[list[Pending]] = [[] for _ in range(max(1, count))]
    loads = [0] * len(bins)
    for item in sorted(work, key=lambda w: (-len(w.source), w.file.path)):
        lightest = loads.index(min(loads))
        bins[lightest].append(item)
        loads[lightest] += len(item.source) + 1
    return [chunk for chunk in bins if chunk]


# Worker-process state, set once per process by the pool initializer.
_worker_config: ScanConfig | None = None
_worker_cache: ResultCache | None = None


def _init_worker(config: ScanConfig, cache_dir: Path | None) -> None:
    global _worker_config, _worker_cache
    interrupts.in_worker()  # the terminal's Ctrl-C is the parent's to act on, not a crash
    # A worker that dies is reported as a MESH000 finding; a fatal-error dump inherited from
    # the parent (pytest enables faulthandler) would only be noise on the terminal.
    faulthandler.disable()
    # What the worker inherited (the interpreter, libcst, the scanner) lives as long as the
    # worker does: out of the collector's sight, each collection only walks new objects.
    gc.freeze()
    _worker_config = config
    _worker_cache = ResultCache(cache_dir) if cache_dir is not None else None


def _analyze_chunk(chunk: list[Pending]) -> list[FileOutcome]:
    assert _worker_config is not None, "worker used before its initializer ran"
    return [analyze(work, _worker_config, _worker_cache) for work in chunk]


def _run_pool(
    chunks: Sequence[list[Pending]], workers: int, config: ScanConfig, cache_dir: Path | None
) -> tuple[list[FileOutcome], list[Pending]]:
    """(outcomes of the chunks that finished, the work of those lost to a dead worker)."""
    done: list[FileOutcome] = []
    lost: list[Pending] = []
    pool = ProcessPoolExecutor(
        max_workers=workers, initializer=_init_worker, initargs=(config, cache_dir)
    )
    try:
        with interrupts.forking():  # the workers start at the first submit
            futures = [(chunk, pool.submit(_analyze_chunk, chunk)) for chunk in chunks]
        for chunk, future in futures:
            try:
                done += future.result()
            except BrokenProcessPool:  # one file crashed a worker; the others are innocent
                interrupts.raise_received()  # unless a signal to us all killed it
                lost += chunk
    except BaseException:  # an interrupt, above all: no worker outlives the scan
        interrupts.stop_pool(pool)
        raise
    pool.shutdown(wait=True)
    return done, lost


def _analyze_all(
    files: Sequence[SourceFile], config: ScanConfig, jobs: int, cache_dir: Path | None
) -> list[FileOutcome]:
    """Outcomes for every file. Analysis always runs in worker processes (one when jobs is 1),
    so a native crash of the parser costs one file, never the scan."""
    cache = ResultCache(cache_dir) if cache_dir is not None else None
    outcomes: list[FileOutcome] = []
    work: list[Pending] = []
    for file in files:
        prepared = prepare(file, config, cache)
        if isinstance(prepared, Pending):
            work.append(prepared)
        else:
            outcomes.append(prepared)
    if not work:
        return outcomes
    chunks = _chunks(work, jobs * CHUNKS_PER_JOB)
    done, lost = _run_pool(chunks, min(jobs, len(chunks)), config, cache_dir)
    outcomes += done
    # After a crash, retry each lost file alone to find the culprit(s).
    for item in sorted(lost, key=lambda w: w.file.path):
        alone, crashed_again = _run_pool([[item]], 1, config, cache_dir)
        outcomes += alone if not crashed_again else [crashed(item)]
    return outcomes


def with_snippets(findings: Sequence[Finding], locations: dict[str, str]) -> list[Finding]:
    """Fill in the source line of findings that lack one (it is part of the baseline key)."""
    texts: dict[str, list[str]] = {}
    filled: list[Finding] = []
    for finding in findings:
        if finding.snippet or finding.rule == "MESH000" or finding.path not in locations:
            filled.append(finding)
            continue
        if finding.path not in texts:
            try:
                with open(locations[finding.path], "rb") as handle:
                    texts[finding.path] = handle.read().decode("utf-8", "replace").splitlines()
            except OSError:
                texts[finding.path] = []
        lines = texts[finding.path]
        snippet = lines[finding.line - 1].strip() if 0 < finding.line <= len(lines) else ""
        filled.append(dataclasses.replace(finding, snippet=snippet))
    return filled


def scan(
    paths: Sequence[str],
    config: ScanConfig,
    *,
    root: Path | None = None,
    jobs: int = 1,
    cache_dir: Path | None = None,
) -> ScanResult:
    """Scan `paths` (relative to `root`, default the working directory) with every enabled rule.

    `cache_dir` None disables the cache. Same files and configuration give the same findings,
    emit sites and errors whatever `jobs` is and whether the cache was warm.
    """
    started = time.perf_counter()
    root = (root or Path.cwd()).absolute()
    discovery = discover(paths, config, root)
    outcomes = sorted(
        _analyze_all(discovery.files, config, max(1, jobs), cache_dir),
        key=lambda outcome: outcome.report.path,
    )
    reports = [outcome.report for outcome in outcomes]
    raw = [finding for report in reports for finding in report.findings]
    raw += discovery.problems
    tree = tree_passes(reports, config)
    raw += tree.findings
    locations = {file.path: file.location for file in discovery.files}
    enabled = with_snippets([f for f in raw if config.enabled(f.rule)], locations)
    applied = suppress.apply(
        enabled, [item for outcome in outcomes for item in outcome.suppressions], config
    )
    sites = sorted(
        (site for report in reports for site in report.emit_sites),
        key=lambda site: (site.path, site.line, site.column),
    )
    errors = [problem for outcome in outcomes for problem in outcome.problems]
    errors += [problem for report in reports for problem in report.problems]
    errors += applied.unused + tree.problems
    stats = ScanStats(
        files=len(discovery.files),
        parsed=sum(1 for report in reports if report.parsed),
        cached=sum(1 for outcome in outcomes if outcome.cached),
        seconds=round(time.perf_counter() - started, 3),
        suppressed=applied.suppressed,
        cst_parsed=sum(1 for report in reports if report.tree_built),
    )
    return ScanResult(
        root=root,
        findings=sorted(set(applied.kept), key=finding_order),
        emit_sites=sites,
        errors=sorted(errors),
        stats=stats,
        scanned_paths=[file.path for file in discovery.files],
        rules=rules_of(config),
    )
