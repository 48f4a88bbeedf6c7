"""Negative control: the score measures the checks. One INV4 obligation (a rejected delivery
is re-sent until its retry budget is spent) turned off in a test build — a monkeypatched
checker — must lower the score on the same fixed mutants."""

from __future__ import annotations

import dataclasses

import pytest

from invariants.checks.inv4_no_resend_after_timeout import NoResendAfterTimeout
from invariants.mutants.matrix import reference_scan_config
from invariants.mutants.score.report import score
from invariants.mutants.score.run import Options, ScoreRun, run_score
from invariants.mutants.score.target import reference_target
from invariants.mutants.score.triage import Triage

# `<` flipped in the exception-graph walk of errors.py: a rejected call then looks final
# and is given up at once, which INV4's "retry budget spent" obligation catches.
OPERATORS = ("core/ReplaceComparisonOperator_Lt_Gt", "core/ReplaceComparisonOperator_Lt_Eq")


def _run() -> ScoreRun:
    target = dataclasses.replace(
        reference_target(reference_scan_config()), files=("errors.py",), checks=("INV4",)
    )
    return run_score(target, Triage(None), Options(operators=OPERATORS, timeout=120))


def test_turning_off_one_obligation_lowers_the_score(monkeypatch: pytest.MonkeyPatch) -> None:
    full = _run()
    assert full.results and score(full) == 1.0
    assert {r.verdict.check for r in full.results if r.verdict} == {"INV4"}
    # The weakened build: INV4 no longer holds a rejected delivery to its retry budget
    # (neither "given up early" nor "not re-sent in time"); its timeout obligations stay.
    monkeypatch.setattr(NoResendAfterTimeout, "_owes_retry", lambda *_args: None)
    weakened = _run()
    assert [r.mutant.id for r in weakened.results] == [r.mutant.id for r in full.results]
    weakened_score = score(weakened)
    assert weakened_score is not None and weakened_score < 1.0
    assert any(r.verdict and r.verdict.status == "survived" for r in weakened.results)
