"""A mutant's scan (in `prove --mutate` and in the kill matrix) parses its one mutated
module: the other modules come from the run's shared per-file cache, and the findings are a
cold scan's."""

from __future__ import annotations

from pathlib import Path

import pytest

from invariants.mutants import matrix
from invariants.mutants.build import mutated_sources
from invariants.mutants.matrix import (
    StaticScan,
    reference_scan_config,
    scan_sources,
    scan_tree,
    shared_cache,
)
from invariants.mutants.registry import find_mutant
from invariants.mutants.score.evaluate import finding_key
from invariants.mutants.score.target import reference_target


def _keys(scanned: StaticScan) -> set[tuple[str, str, str, str]]:
    return {finding_key(f) for f in scanned.findings}


def _entries() -> int:
    return sum(1 for _ in shared_cache().rglob("*.json"))


def test_a_mutants_scan_through_the_shared_cache_finds_what_a_cold_scan_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(matrix, "ensure_scratch", lambda: tmp_path / "scratch")  # a fresh cache
    config = reference_scan_config()
    clean = scan_sources(reference_target(config).sources, config)  # as the baseline does
    cached = _entries()
    sources = mutated_sources(find_mutant("M1"))  # a guard on the payload's type: MESH001/2
    warm = scan_sources(sources, config)
    tree = tmp_path / "cold"
    for relative, text in sources.items():
        (tree / relative).parent.mkdir(parents=True, exist_ok=True)
        (tree / relative).write_text(text, encoding="utf-8")
    cold = scan_tree(tree, config)  # no cache at all
    assert _keys(warm) == _keys(cold)
    # The negative control: the mutant's findings are new, so the cache did not answer for
    # the mutated module; it analysed that one alone (one entry more).
    assert _keys(warm) - _keys(clean)
    assert _entries() == cached + 1
