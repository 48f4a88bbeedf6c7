"""Cosmic Ray's mutants as `prove --mutate` names them: stably, by what they change."""

from __future__ import annotations

import pytest

from invariants.mutants.score.engine import (
    apply,
    enumerate_file,
    in_annotation,
    operator_names,
    postponed,
)

SOURCE = '''\
from __future__ import annotations


class Breaker:
    def tripped(self, count: int | None, limit: int) -> bool:
        return count is not None and count > limit
'''

COMPARE = ["core/ReplaceComparisonOperator_Gt_GtE"]


def test_only_core_operators_without_arguments_run() -> None:
    names = operator_names()
    assert "core/ReplaceComparisonOperator_Gt_GtE" in names
    assert all(name.startswith("core/") for name in names)


def test_a_mutant_is_named_by_function_operator_and_snippet_not_by_line() -> None:
    (mutant,) = enumerate_file("breaker.py", SOURCE, COMPARE)
    assert (mutant.function, mutant.line) == ("Breaker.tripped", 6)
    assert mutant.snippet == "return count is not None and count > limit"
    moved = "# a comment above moves every line\n\n" + SOURCE
    (same,) = enumerate_file("breaker.py", moved, COMPARE)
    assert same.line == 8 and same.id == mutant.id  # moved, not renamed
    renamed = SOURCE.replace("def tripped", "def open")
    (other,) = enumerate_file("breaker.py", renamed, COMPARE)
    assert other.id != mutant.id  # a different function is a different mutant


def test_applying_a_mutant_changes_exactly_its_site() -> None:
    (mutant,) = enumerate_file("breaker.py", SOURCE, COMPARE)
    mutated = apply(mutant, SOURCE)
    assert "count >= limit" in mutated
    assert mutated.replace("count >= limit", "count > limit") == SOURCE


def test_a_mutant_that_no_longer_applies_says_so() -> None:
    (mutant,) = enumerate_file("breaker.py", SOURCE, COMPARE)
    with pytest.raises(ValueError, match="no longer applies"):
        apply(mutant, SOURCE.replace("count > limit", "count == limit"))


def test_mutants_inside_annotations_are_flagged() -> None:
    mutants = enumerate_file("breaker.py", SOURCE, ["core/ReplaceBinaryOperator_BitOr_BitAnd"])
    assert [m.annotation for m in mutants] == [True]  # `int | None` in the signature
    assert postponed(SOURCE) and not postponed(SOURCE.replace("annotations", "division"))
    body = "def f(a):\n    return a | 1\n"
    (in_body,) = enumerate_file("f.py", body, ["core/ReplaceBinaryOperator_BitOr_BitAnd"])
    assert not in_body.annotation


def test_in_annotation_knows_variable_and_return_annotations() -> None:
    import parso

    tree = parso.parse("def f() -> int | None:\n    x: A | B = c | d\n")
    bars = [leaf for leaf in _leaves(tree) if getattr(leaf, "value", "") == "|"]
    assert [in_annotation(leaf) for leaf in bars] == [True, True, False]


def _leaves(node: object) -> list[object]:
    children = getattr(node, "children", None)
    if children is None:
        return [node]
    return [leaf for child in children for leaf in _leaves(child)]


def test_an_unpacking_star_is_flagged_not_taken_for_arithmetic() -> None:
    source = "def f(a, *, b):\n    return g(*a, **b) or {**b} or a * b ** 2\n"
    mutants = enumerate_file(
        "f.py", source,
        ["core/ReplaceBinaryOperator_Mul_Add", "core/ReplaceBinaryOperator_Pow_Add"],
    )
    # Cosmic Ray rewrites the signature's `*,` and the display's `**b` (not the call's).
    shown = {(apply(m, source).splitlines()[m.line - 1].strip(), m.star_marker) for m in mutants}
    assert shown == {
        ("def f(a, +, b):", True),
        ("return g(*a, **b) or {+b} or a * b ** 2", True),
        ("return g(*a, **b) or {**b} or a + b ** 2", False),
        ("return g(*a, **b) or {**b} or a * b + 2", False),
    }


def test_a_sample_is_drawn_by_its_seed_alone() -> None:
    from invariants.mutants.score.run import choose

    source = "def f(a, b):\n    return a < b or a > b or a == b\n"
    mutants = enumerate_file("f.py", source, operator_names())
    assert len(mutants) > 10
    first = [m.id for m in choose(mutants, 5, seed=1)]
    assert first == [m.id for m in choose(list(reversed(mutants)), 5, seed=1)]  # order-free
    assert first != [m.id for m in choose(mutants, 5, seed=2)]
    assert len(choose(mutants, 10_000, seed=1)) == len(mutants)
