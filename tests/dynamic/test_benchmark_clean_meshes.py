"""benchmarks/clean_meshes.py on a small sample: the reference mesh, searched over two
seeds, raises no false alarm; its negative control, the first registered mutant that must
break INV1, fails in each seed, named."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import pytest
from mutant_controls import FIRST_CONTROL, mutant_factory

from invariants.checks import CheckParams
from reference_impl.adapter import make_adapter

_BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def clean_meshes(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(_BENCHMARKS))  # its sibling scripts
    return importlib.import_module("clean_meshes")


def test_the_reference_raises_no_false_alarm(clean_meshes: ModuleType) -> None:
    [row] = clean_meshes.measure(make_adapter, CheckParams(), ["INV1"], 2, 10)
    assert (row.seeds, row.failed) == (2, [])
    assert "| INV1 | 0 of 2 seeds failed |" in clean_meshes.table(Path("reference"), [row])


def test_a_mutant_fails_in_every_seed_named(clean_meshes: ModuleType) -> None:
    mutant = mutant_factory(FIRST_CONTROL["INV1"])
    [row] = clean_meshes.measure(mutant, CheckParams(), ["INV1"], 2, 10)
    assert row.failed == [0, 1]
    assert row.first.startswith("INV1: ")
    assert "2 of 2 seeds failed (seeds 0, 1)" in clean_meshes.table(Path("m"), [row])


def test_an_unknown_invariant_is_a_usage_error(clean_meshes: ModuleType) -> None:
    with pytest.raises(SystemExit) as exit_info:
        clean_meshes.main(["--repo", ".", "--invariants", "INV9"])
    assert exit_info.value.code == 2
