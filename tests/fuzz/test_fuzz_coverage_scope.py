"""`coverage_scope`: HypoFuzz's coverage is measured on the mesh, not on the harness's code
(the negative control: HypoFuzz's own collector measures both)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("hypofuzz", reason="needs the fuzz extra: pip install -e '.[fuzz]'")

import hypofuzz.coverage as hypofuzz_coverage

import reference_impl.ladder
from invariants.engine_internals import coverage_scope
from invariants.fuzzing import schedule

HARNESS_FILE = schedule.__file__
MESH_FILE = reference_impl.ladder.__file__


def _traced_files() -> set[str]:
    with hypofuzz_coverage.CoverageCollector() as collector:
        schedule.slice_seconds(18.0, 7, 2)  # the harness's code
        reference_impl.ladder.is_transient(TimeoutError())  # the mesh's
    return {Path(location.filename).name for branch in collector.branches
            for location in branch}


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """`measure_the_mesh_only` for this test only: the patched names are restored after."""
    for owner, name in [(hypofuzz_coverage, "should_trace"),
                        (hypofuzz_coverage, coverage_scope._MARK),
                        (hypofuzz_coverage.CoverageCollector, "trace_pre_312")]:
        monkeypatch.setattr(owner, name, getattr(owner, name, False), raising=False)
    coverage_scope.measure_the_mesh_only()
    coverage_scope.measure_the_mesh_only()  # idempotent


def test_the_filter_leaves_out_the_harness_and_keeps_the_mesh() -> None:
    assert coverage_scope.traces(MESH_FILE)
    assert not coverage_scope.traces(HARNESS_FILE)
    assert coverage_scope.TRACES_ALL(HARNESS_FILE)  # what HypoFuzz alone would trace


@pytest.mark.skipif(sys.gettrace() is not None, reason="another tracer is installed")
def test_a_collector_measures_the_mesh_only(installed: None) -> None:
    files = _traced_files()
    assert Path(MESH_FILE).name in files
    assert Path(HARNESS_FILE).name not in files


@pytest.mark.skipif(sys.gettrace() is not None, reason="another tracer is installed")
def test_without_it_hypofuzz_measures_the_harness_too() -> None:
    files = _traced_files()
    assert {Path(MESH_FILE).name, Path(HARNESS_FILE).name} <= files
