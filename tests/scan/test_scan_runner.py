"""The runner: same result whatever the job count, the emit-site canary, rule selection."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
import scan_stand_in

from invariants.scan import analysis, runner
from invariants.scan.analysis import Pending
from invariants.scan.files import SourceFile
from invariants.scan.model import FileReport, Finding, RuleOptions, ScanConfig
from invariants.scan.problems import EMIT_SITE_COUNT
from invariants.scan.rules.spec import TreeResult
from invariants.scan.runner import _chunks, scan


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    scan_stand_in.install(monkeypatch)
    for index in range(24):
        package = tmp_path / f"pkg{index % 3}"
        package.mkdir(exist_ok=True)
        lines = ["def handle(d):"]
        lines += ["    if d.may_answer():", "        return DeliveryFailure(d)"] * (index % 2)
        lines += [f"    x{n}.subscribe(h)  # flag:MESH004" for n in range(index % 4)]
        lines += ["    return DeliveryFailure(d)"] if index % 5 == 0 else []
        (package / f"m{index:02}.py").write_text("\n".join(lines) + "\n")
    (tmp_path / "pkg0" / "broken.py").write_bytes(b"\xff\xfe\n")
    return tmp_path


def test_two_jobs_give_the_same_result_as_one(tree: Path) -> None:
    one = scan(["."], ScanConfig(), root=tree, jobs=1, cache_dir=None)
    two = scan(["."], ScanConfig(), root=tree, jobs=2, cache_dir=None)
    assert one.findings and one.emit_sites
    assert (one.findings, one.emit_sites, one.errors) == (two.findings, two.emit_sites, two.errors)
    assert one.scanned_paths == two.scanned_paths
    assert (one.stats.files, one.stats.parsed) == (two.stats.files, two.stats.parsed) == (25, 24)


def test_chunks_cover_every_file_once_and_balance_size(tree: Path) -> None:
    work = [
        Pending(SourceFile(f"f{size}.py", "", False), b"x" * size, "")
        for size in (900, 500, 400, 300, 200, 100, 100, 100)
    ]
    chunks = _chunks(work, 3)
    assert sorted(w.file.path for chunk in chunks for w in chunk) == sorted(
        w.file.path for w in work
    )
    loads = sorted(sum(len(w.source) for w in chunk) for chunk in chunks)
    assert loads == [800, 900, 900]
    assert len(_chunks(work[:2], 8)) == 2  # never an empty chunk


def crash_on(name: str) -> Callable[..., FileReport]:
    """A stand-in engine that kills its process on one file, as a native parser crash would."""

    def analyze(path: str, source: bytes, config: ScanConfig, *, is_test: bool) -> FileReport:
        if path.endswith(name):
            os._exit(70)
        return scan_stand_in.analyze_source(path, source, config, is_test=is_test)

    return analyze


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_worker_crash_costs_only_its_file(
    tree: Path, monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    healthy = scan(["."], ScanConfig(), root=tree, jobs=jobs, cache_dir=None)
    monkeypatch.setattr(analysis, "analyze_source", crash_on("m07.py"))
    result = scan(["."], ScanConfig(), root=tree, jobs=jobs, cache_dir=tree / "cache")
    assert [f for f in result.findings if f.path == "pkg1/m07.py"] == []
    crashed = [e for e in result.errors if e.path == "pkg1/m07.py"]
    assert [(e.kind, e.message) for e in crashed] == [
        ("not-analysed",
         "not analysed: the parser crashed on this file (its worker process died)")
    ]
    others = [f for f in result.findings if f.path != "pkg1/m07.py"]
    assert others == [f for f in healthy.findings if f.path != "pkg1/m07.py"]
    assert result.stats.parsed == healthy.stats.parsed - 1


def test_emit_site_canary(tree: Path) -> None:
    sites = scan(["."], ScanConfig(), root=tree, cache_dir=None).emit_sites
    count = len(sites)
    assert count == 12 + 5  # 12 guarded (odd files), 5 unguarded (every fifth)
    assert sum(site.guarded for site in sites) == 12
    matching = ScanConfig(options=RuleOptions({"expected_emit_sites": count}))
    assert scan(["."], matching, root=tree, cache_dir=None).errors == []
    drifted = ScanConfig(options=RuleOptions({"expected_emit_sites": count + 1}))
    errors = scan(["."], drifted, root=tree, cache_dir=None).errors
    assert [e.kind for e in errors] == [EMIT_SITE_COUNT]
    assert f"found {count} emit sites, expected_emit_sites = {count + 1}" in errors[0].message


def test_select_and_ignore_filter_findings(tree: Path) -> None:
    everything = scan(["."], ScanConfig(), root=tree, cache_dir=None)
    assert {f.rule for f in everything.findings} == {"MESH000", "MESH004"}
    only_parse = dataclasses.replace(ScanConfig(), select=("MESH000",))
    assert {f.rule for f in scan(["."], only_parse, root=tree, cache_dir=None).findings} == {
        "MESH000"
    }
    no_parse = dataclasses.replace(ScanConfig(), ignore=("MESH000",))
    assert {f.rule for f in scan(["."], no_parse, root=tree, cache_dir=None).findings} == {
        "MESH004"
    }


def test_a_scanner_exception_costs_one_file(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def fragile(path: str, source: bytes, config: ScanConfig, *, is_test: bool) -> FileReport:
        if path == "pkg1/m01.py":
            raise RecursionError("maximum recursion depth exceeded")
        return scan_stand_in.analyze_source(path, source, config, is_test=is_test)

    monkeypatch.setattr(analysis, "analyze_source", fragile)
    cache = tree / "cache"
    result = scan(["."], ScanConfig(), root=tree, cache_dir=cache)
    assert [f for f in result.findings if f.path == "pkg1/m01.py"] == []
    failed = [e for e in result.errors if e.path == "pkg1/m01.py"]
    assert [(e.kind, e.message) for e in failed] == [
        ("not-analysed",
         "not analysed: scanner error: RecursionError: maximum recursion depth exceeded")
    ]
    assert result.stats.parsed == 23
    # The failure is not cached: once the scanner is fixed the file is analysed again.
    scan_stand_in.install(monkeypatch)
    again = scan(["."], ScanConfig(), root=tree, cache_dir=cache)
    assert again.stats.cached == 24  # all but the file that failed
    assert [f.rule for f in again.findings if f.path == "pkg1/m01.py"] == ["MESH004"]


def test_tree_level_findings_get_their_source_line(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The tree-level pass may report without a snippet; the runner reads the line, since the
    # snippet is part of the baseline key and the text output.
    def tree_pass(reports: Sequence[FileReport], config: ScanConfig) -> TreeResult:
        return TreeResult([
            Finding("MESH001", "pkg0/m00.py", 2, 12, 2, "unguarded", "handle", ""),
            Finding("MESH001", "pkg0/m00.py", 99, 1, 99, "past the end", "handle", ""),
        ])

    monkeypatch.setattr(runner, "tree_passes", tree_pass)
    result = scan(["pkg0/m00.py"], ScanConfig(), root=tree, cache_dir=None)
    assert [(f.line, f.snippet) for f in result.findings] == [
        (2, "return DeliveryFailure(d)"), (99, ""),
    ]
