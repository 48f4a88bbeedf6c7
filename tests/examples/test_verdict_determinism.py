"""The same verdict every run: three fresh-process `check --format json` runs of an example
mesh give identical documents (benchmarks/verdict_determinism.py runs every example).
`differences` itself is shown to see a changed verdict, count or nested list."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from verdict_determinism import EXAMPLES, compare, differences  # noqa: E402


def test_differences_names_every_path_that_differs() -> None:
    first = {"invariants": [{"check": "INV1", "verdict": "pass", "examples": 60}], "ok": True}
    assert list(differences(first, first)) == []
    other = {"invariants": [{"check": "INV1", "verdict": "violation", "examples": 61}],
             "ok": True}
    assert list(differences(first, other)) == [".invariants[0].examples",
                                               ".invariants[0].verdict"]
    assert list(differences(first, {**first, "invariants": []})) == [".invariants"]


@pytest.mark.slow
def test_three_fresh_runs_of_check_agree_on_an_example_mesh() -> None:
    assert compare(EXAMPLES / "tinymesh-repo", 3) == []
