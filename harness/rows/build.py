"""An invariant run's `Outcome` as `check`'s row (`row_of`), built where the run ran: a
worker's row travels back as data, the mesh's exception as its traceback's text, and
with it what the run saw of the other checks it judged as a bystander."""

from __future__ import annotations

from collections.abc import Mapping

from harness.rows.counterexample import counterexample_of, failure_shown
from harness.rows.row import InvariantRow
from invariants.checks import CHECKS
from invariants.dynamic.report import own_traceback
from invariants.dynamic.runner import Outcome


def row_of(outcome: Outcome, adapter: str = "") -> InvariantRow:
    error = outcome.error
    trace = own_traceback(error) if error is not None else ""  # the mesh's frames, not ours
    return InvariantRow(outcome.check_id, outcome.ok, outcome.examples, outcome.seconds,
                        first_line(outcome), outcome.verdict,
                        counts_of(outcome.check_id, outcome.evidence),
                        dict(outcome.unexercised), adapter, trace, failure_shown(outcome),
                        dict(outcome.inapplicable), counterexample_of(outcome),
                        bystanders=dict(outcome.bystanders))


def first_line(outcome: Outcome) -> str:
    if outcome.verdict == "not applicable" and outcome.failure_text:
        return outcome.failure_text.splitlines()[0]
    if outcome.violations:
        return str(outcome.violations[0])
    if outcome.verdict == "not exercised":
        return unexercised_line(outcome.unexercised)
    if outcome.verdict == "error" and outcome.failure_text:
        return outcome.failure_text.splitlines()[0]
    return ""


def unexercised_line(unexercised: Mapping[str, str]) -> str:
    return "not exercised: " + "; ".join(
        f"{name} (0): {cause}" for name, cause in unexercised.items()
    )


def counts_of(check_id: str, evidence: Mapping[str, int]) -> dict[str, int]:
    """Every obligation of the check with the cases the run exercised, 0 where it saw none
    (a run that errs before any example still lists what it did not check)."""
    return {**dict.fromkeys(CHECKS[check_id].obligations, 0), **evidence}
