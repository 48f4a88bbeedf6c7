"""Coverage-guided judging (`invariants.mutants.score.reach`): a mutant is judged only by the
checks whose runs on the unmutated mesh reach its statement, and gets the verdict judging it
by every check gives; a mutant no check reaches survives as unreached, never killed."""

from __future__ import annotations

import dataclasses

import pytest

from invariants.mutants.executed_lines import sound_for
from invariants.mutants.matrix import reference_scan_config
from invariants.mutants.score.baseline import measure
from invariants.mutants.score.reach import IMPORT, Reach, statement_span
from invariants.mutants.score.run import Options, ScoreRun, run_score
from invariants.mutants.score.target import MeshTarget, reference_target
from invariants.mutants.score.triage import Triage

SOURCE = '''\
LIMIT = 3


def f(x):
    if x > LIMIT:
        return [
            x,
            x + 1,
        ]
    return []
'''

# Judged by INV4 alone: its `<` flipped in the exception-graph walk of errors.py (a
# rejected call looks final: INV4 kills it), and `is not` flipped in the subscriptions of
# subscribe.py, most of which INV4's plan (no subscriptions) never runs.
FILES = ("errors.py", "subscribe.py")
OPERATORS = ("core/ReplaceComparisonOperator_Lt_Gt", "core/ReplaceComparisonOperator_Lt_Eq",
             "core/ReplaceComparisonOperator_IsNot_Is")


def _target() -> MeshTarget:
    return dataclasses.replace(
        reference_target(reference_scan_config()), files=FILES, checks=("INV4",)
    )


def _run(guided: bool) -> ScoreRun:
    return run_score(_target(), Triage(None),
                     Options(operators=OPERATORS, timeout=120, guided=guided))


def test_a_mutant_is_matched_by_its_whole_innermost_statement() -> None:
    assert statement_span(SOURCE, 7) == (6, 9)  # a line inside a multi-line return
    assert statement_span(SOURCE, 5) == (5, 9)  # the `if` header: the `if` and its body
    assert statement_span(SOURCE, 1) == (1, 1)
    assert statement_span(SOURCE, 3) == (3, 3)  # a blank line is itself
    reach = Reach({"A": {"m.py": frozenset({8})}, "B": {"m.py": frozenset({10})}})
    assert reach.checks_reaching(("A", "B"), "m.py", 7, SOURCE) == ("A",)
    assert reach.checks_reaching(("A", "B"), "m.py", 10, SOURCE) == ("B",)
    assert reach.checks_reaching(("A", "B"), "m.py", 1, SOURCE) == ()
    imported = Reach({IMPORT: {"m.py": frozenset({1})}})
    assert imported.checks_reaching(("A", "B"), "m.py", 1, SOURCE) == ("A", "B")


@pytest.mark.slow
def test_guidance_is_used_only_where_a_run_depends_on_the_code_alone() -> None:
    assert sound_for("ci")
    assert not sound_for("dev")  # random generation: coverage of one run bounds no other
    assert measure(_target(), "dev", guided=True).reach is None


@pytest.mark.slow
def test_guided_verdicts_are_the_unguided_ones() -> None:
    guided, unguided = _run(True), _run(False)
    assert guided.guided and not unguided.guided

    def verdicts(run: ScoreRun) -> dict[str, tuple[str, str, str]]:
        return {r.mutant.id: (r.verdict.status, r.verdict.check, r.verdict.phase)
                for r in run.results if r.verdict is not None}

    assert verdicts(guided) == verdicts(unguided)
    statuses = [r.verdict.status for r in guided.results if r.verdict is not None]
    assert "killed" in statuses and "survived" in statuses
    unreached = [r for r in guided.results if r.verdict is not None and r.verdict.unreached]
    # The negative control: the mutants INV4 never reaches survive unguided too, and the
    # guided run says why instead of running INV4 on them.
    assert unreached
    assert all(r.verdict is not None and r.verdict.status == "survived" for r in unreached)
    assert not any(r.verdict is not None and r.verdict.unreached for r in unguided.results)
