"""`--harness-prove`: one item per pre-fix mutant, passing when every check that must kill
it does. Narrowed to M3 (caught by INV2 alone) to stay quick; the negative control claims
INV1 must also kill M3, which it cannot, so the item must fail and show the mutation."""

from __future__ import annotations

import dataclasses

import pytest
from prove_selection import ONLY_M3

import harness.prove_items
from invariants.mutants.registry import MUTANTS, find_mutant

TABLE = '[tool.harness]\npaths = ["src"]\ninvariants = []\n'
ARGS = ("-p", "harness", "--harness-prove", "-k", ONLY_M3, "-v")


def _repo(pytester: pytest.Pytester) -> None:
    pytester.makepyprojecttoml(TABLE)
    pytester.makepyfile(**{"src/mesh": "VALUE = 1\n"})


def test_each_mutant_is_an_item_and_m3_is_killed(pytester: pytest.Pytester) -> None:
    _repo(pytester)
    listed = pytester.runpytest("-p", "harness", "--harness-prove", "--collect-only", "-q")
    listed.stdout.fnmatch_lines([f"harness::prove::{m.id}" for m in MUTANTS])
    result = pytester.runpytest(*ARGS)
    # Every other item is deselected: the other mutants, the scanned file and the tree.
    result.assert_outcomes(passed=1, deselected=len(MUTANTS) + 1)
    result.stdout.fnmatch_lines([
        "harness::prove::M3 PASSED*",
        "kill matrix: 1 of 1 mutant(s) killed",
        "  M3 unbounded-resubscribe: killed by INV2",
    ])


def test_a_mutant_a_check_misses_fails_with_its_diff(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _repo(pytester)
    m3 = find_mutant("M3")
    claimed = dataclasses.replace(m3, kills=("INV2", "INV1"))
    monkeypatch.setattr(harness.prove_items, "find_mutant", lambda name: claimed)
    result = pytester.runpytest(*ARGS)
    result.assert_outcomes(failed=1, deselected=len(MUTANTS) + 1)
    result.stdout.fnmatch_lines([
        "M3 unbounded-resubscribe (*) survived INV1:",
        "  INV2: killed after *",
        "  INV1: SURVIVED*",
        "The mutation:",
        "--- reference_impl/*",
        "kill matrix: 0 of 1 mutant(s) killed",
        "  M3 unbounded-resubscribe: survived (missed by INV1; killed by INV2)",
    ])
