"""benchmarks/seeded_runs.py's `found_by_check` on a small sample: a bug only another
invariant's plan drives is found as `check` finds it (every run judged by every checker),
where its own invariant's search alone never finds it; the clean reference is the control."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import pytest
from bystander_meshes import RaisesOnFanOut

from reference_impl.adapter import make_adapter

_BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
SEARCH = {"seed_scenarios": False}  # the drawn rules alone: no seed program drives it


@pytest.fixture
def seeded_runs(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(_BENCHMARKS))
    return importlib.import_module("seeded_runs")


def test_a_bug_another_plan_drives_is_found_as_check_finds_it(
        seeded_runs: ModuleType) -> None:
    assert seeded_runs.found_in("INV7", RaisesOnFanOut, 0, 5, **SEARCH) is None
    found = seeded_runs.found_by_check("INV7", RaisesOnFanOut, 0, 5, **SEARCH)
    # The example of INV6's run (whose plan fans out) that saw it.
    inv6 = seeded_runs.seeded_run("INV6", RaisesOnFanOut, 0, 5, **SEARCH)
    assert found is not None and found == inv6.bystanders["INV7"].example


def test_the_clean_reference_is_found_in_no_run(seeded_runs: ModuleType) -> None:
    assert seeded_runs.found_by_check("INV7", make_adapter, 0, 5, **SEARCH) is None
