"""`check`'s merge of what each invariant's run saw of the others, on rows built here (so
each case is judged in milliseconds; tests/plugin/test_check_bystanders.py runs real ones):
an obligation only another run exercised is exercised; one no run exercised still is not;
a recorded violation whose replay passes still fails the row, saying so; a row that failed
on its own, or is not applicable, keeps its verdict; rows of different adapters never mix."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from harness.jobs.check.report import CheckResult, render, to_json
from harness.rows.build import counts_of
from harness.rows.merge import merged
from harness.rows.row import InvariantRow
from harness.scan_verdict import run_scan
from invariants.checks import CHECKS
from invariants.dynamic.runner import Bystander, Outcome
from invariants.dynamic.seed_programs import Program
from invariants.scan.model import ScanConfig

FIRST, SECOND = list(CHECKS["INV1"].obligations)
CAUSE = "no anonymous post was rejected"
PROGRAM: Program = (("init", {"watermarks": (None, None, None), "swarm": {},
                              "scenario": None}),
                    ("user", {"sender": "client", "to": "h0", "route": "monolith",
                              "count": 1}))
VIOLATION = "INV1 violated:\nINV1: d1 was answered twice [seq 4 @ 0 ms (handled)]"


def _inv1(verdict: str = "not exercised", own: Mapping[str, int] | None = None,
          adapter: str = "") -> InvariantRow:
    counts = counts_of("INV1", own if own is not None else {FIRST: 0, SECOND: 3})
    unexercised = {name: CAUSE for name, count in counts.items() if not count}
    return InvariantRow("INV1", verdict == "pass", 60, 1.0, "not exercised: ...", verdict,
                        counts, unexercised if verdict == "not exercised" else {}, adapter)


def _seeing_inv1(check_id: str, evidence: Mapping[str, int], violation: str | None = None,
                 adapter: str = "") -> InvariantRow:
    seen = Bystander(counts_of("INV1", evidence), violation, PROGRAM if violation else None)
    return InvariantRow(check_id, True, 60, 1.0, "", "pass", counts_of(check_id, {}), {},
                        adapter, bystanders={"INV1": seen})


def _never_replayed(adapter: str, check: str, program: Program, name: str) -> Outcome:
    raise AssertionError(f"nothing to replay, but {check} replayed {name}")


def _replays_pass(adapter: str, check: str, program: Program, name: str) -> Outcome:
    return Outcome(check, "pass", 1, None, None, 0.1)


def _ignore(line: str) -> None:
    pass


def test_an_obligation_only_another_run_exercised_is_exercised() -> None:
    row, other = merged([_inv1(), _seeing_inv1("INV7", {FIRST: 4})], _never_replayed,
                        _ignore)
    assert (row.verdict, row.passed, row.evidence, row.unexercised) == ("pass", True, "", {})
    assert row.counts == {FIRST: 4, SECOND: 3}
    assert row.borrowed == {"INV7": {FIRST: 4}}
    assert (other.verdict, other.borrowed) == ("pass", {})  # INV1's run saw nothing of INV7
    scan = run_scan([], ScanConfig(), Path("."), cache_dir=None, baseline=None)
    result = CheckResult("ci", scan, [row, other], None)
    text = render(result)
    assert "counts include the cases other invariants' runs gave: INV7 4" in text
    assert text.count("exercised only while driving INV7's plan") == 1  # FIRST's, not SECOND's
    obligations = json.loads(to_json(result))["invariants"][0]["obligations"]
    assert [(o["exercised"], o.get("by_other_runs")) for o in obligations] == [
        (4, {"INV7": 4}), (3, None)]


def test_the_negative_control_an_obligation_no_run_exercised_stays_unexercised() -> None:
    row = merged([_inv1(), _seeing_inv1("INV7", {SECOND: 2})], _never_replayed, _ignore)[0]
    assert (row.verdict, row.passed) == ("not exercised", False)
    assert row.unexercised == {FIRST: CAUSE}
    assert row.evidence == f"not exercised: {FIRST} (0): {CAUSE}"
    assert row.counts == {FIRST: 0, SECOND: 5}


def test_another_adapters_runs_lend_nothing() -> None:
    rows = [_inv1(adapter="a"), _seeing_inv1("INV7", {FIRST: 4}, adapter="b")]
    assert merged(rows, _never_replayed, _ignore)[0].verdict == "not exercised"


def test_a_recorded_violation_whose_replay_passes_fails_the_row_as_recorded() -> None:
    said: list[str] = []
    row = merged([_inv1("pass", {FIRST: 1, SECOND: 1}),
                  _seeing_inv1("INV5", {}, VIOLATION)], _replays_pass, said.append)[0]
    assert (row.verdict, row.passed) == ("violation", False)
    assert row.evidence == "INV1: d1 was answered twice [seq 4 @ 0 ms (handled)]"
    assert row.failure.startswith("Found while driving INV5's plan: INV5's run judged INV1 "
                                  "as a bystander")
    assert "replayed on INV1's own machine, it passed" in row.failure
    assert "state.user(" in row.failure
    example = row.counterexample
    assert example is not None
    assert (example.found_by, example.replayed, example.steps) == ("INV5", False, 2)
    assert example.program.startswith("state = INV1Machine()\nstate.init(")
    assert said == ["  INV1: replaying the violation INV5's run saw"]


def test_a_row_failing_on_its_own_or_not_applicable_keeps_its_verdict() -> None:
    failing = _inv1("violation", {FIRST: 1, SECOND: 1})
    inapplicable = _inv1("not applicable", {})
    for row in (failing, inapplicable):
        after = merged([row, _seeing_inv1("INV5", {FIRST: 2}, VIOLATION)], _never_replayed,
                       _ignore)[0]
        assert (after.verdict, after.passed, after.failure) == (
            row.verdict, row.passed, row.failure)
    assert merged([inapplicable, _seeing_inv1("INV5", {FIRST: 2})], _never_replayed,
                  _ignore)[0] == inapplicable
