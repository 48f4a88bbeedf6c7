"""Negative control: the score measures the checks. INV4 weakened in a test build — a
monkeypatched checker that believes the mesh's own timeout flag, no longer holds a rejected
delivery to its retry budget and asks for no evidence — must lower the score on the same
fixed mutants."""

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
        reference_target(reference_scan_config()), files=("errors.py",), checks=("INV4",),
        conformance=False,  # INV4 alone: adapter-check's grain program kills these too
    )
    return run_score(target, Triage(None), Options(operators=OPERATORS, timeout=120))


@pytest.mark.slow
def test_turning_off_one_obligation_lowers_the_score(monkeypatch: pytest.MonkeyPatch) -> None:
    full = _run()
    assert full.results and score(full) == 1.0
    assert {r.verdict.check for r in full.results if r.verdict} == {"INV4"}
    # The weakened build, INV4 as it was before its verdicts carried evidence: it takes
    # the mesh's word for what timed out (no cross-check against the harness's facts), no
    # longer holds a rejection to its retry budget, and asks for no evidence.
    monkeypatch.setattr(NoResendAfterTimeout, "_truth", lambda *_args: None)
    monkeypatch.setattr(NoResendAfterTimeout, "_owes_retry", lambda *_args: None)
    monkeypatch.setattr(NoResendAfterTimeout, "obligations", {})
    weakened = _run()
    assert [r.mutant.id for r in weakened.results] == [r.mutant.id for r in full.results]
    weakened_score = score(weakened)
    assert weakened_score is not None and weakened_score < 1.0
    assert any(r.verdict and r.verdict.status == "survived" for r in weakened.results)
