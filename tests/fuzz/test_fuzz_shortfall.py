"""A selected test that got no example (or fewer than --min-examples) is reported, with
the budget that explains it, and makes the session exit 3; a found failure outranks it."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("hypofuzz", reason="needs the fuzz extra: pip install -e '.[fuzz]'")

from invariants.fuzzing.behaviours import Coverage
from invariants.fuzzing.config import FuzzConfig
from invariants.fuzzing.failures import SavedFailure
from invariants.fuzzing.observed import TargetObservations
from invariants.fuzzing.run import EXIT_FAILURE, EXIT_NOTHING_FOUND, EXIT_SHORTFALL, FuzzReport
from invariants.fuzzing.session import SessionPlan, SessionRun
from invariants.fuzzing.shortfall import shortfalls
from invariants.fuzzing.summary import render_text, report_json

ALL = ("INV1", "INV2", "INV3", "INV4", "INV5", "INV6", "INV7")


def _plan(min_examples: int = 1) -> SessionPlan:
    return SessionPlan(FuzzConfig(invariants=ALL), workers=2, seconds=18.0,
                       min_examples=min_examples)


def _tests(**examples: int) -> dict[str, TargetObservations]:
    return {c: TargetObservations(examples=examples.get(c, 20), seconds=3.0) for c in ALL}


def _report(tmp_path: Path, tests: dict[str, TargetObservations], plan: SessionPlan,
            failures: list[SavedFailure] | None = None, ended_by: str = "time box") -> FuzzReport:
    run = SessionRun(elapsed=18.2, started_at=1000.0, ended_by=ended_by, exit_code=None,
                     first_failure_seconds=None, log_path=tmp_path / "log")
    return FuzzReport(
        plan=plan, run=run, tests=tests, coverage={c: Coverage() for c in tests},
        goals=Counter(),
        examples_per_worker={}, failures=failures or [], startup_seconds=4.2,
        shortfalls=shortfalls(plan, tests, 4.2),
    )


def test_a_test_that_never_ran_is_named_with_its_budget() -> None:
    (found,) = shortfalls(_plan(), _tests(INV1=0), 4.2)
    assert found.reason == (
        "INV1 never ran: a 0.3-minute box on 2 worker(s) gives each of 7 test(s) 5 s; "
        "start-up took 4 s"
    )


def test_every_test_ran_is_no_shortfall() -> None:  # the control
    assert shortfalls(_plan(), _tests(), 4.2) == []


def test_min_examples_is_a_floor_per_test() -> None:
    found = shortfalls(_plan(min_examples=10), _tests(INV3=9, INV5=10), 4.2)
    assert [s.check_id for s in found] == ["INV3"]
    assert found[0].reason.startswith("INV3 ran 9 example(s), fewer than --min-examples 10: ")


def test_no_example_at_all_says_start_up_did_not_finish() -> None:
    (found, *_) = shortfalls(_plan(), {c: TargetObservations() for c in ALL}, None)
    assert found.reason.endswith("no example ran at all (start-up did not finish in the box)")


def test_the_exit_code_and_summary_of_a_shortfall(tmp_path: Path) -> None:
    report = _report(tmp_path, _tests(INV6=0), _plan())
    assert report.exit_code == EXIT_SHORTFALL
    text = render_text(report)
    assert "NEVER RAN" in text and "INV6 never ran: a 0.3-minute box" in text
    data = report_json(report)
    assert data["exit_code"] == EXIT_SHORTFALL
    assert data["tests"]["INV6"]["ran"] is False and data["tests"]["INV1"]["ran"] is True
    assert data["tests"]["INV1"]["seconds"] == 3.0
    assert data["shortfalls"][0]["check"] == "INV6"
    full = _report(tmp_path, _tests(), _plan())
    assert full.exit_code == EXIT_NOTHING_FOUND
    assert "every selected test ran at least 1 example(s)" in render_text(full)


def test_a_found_failure_outranks_a_shortfall(tmp_path: Path) -> None:
    failure = SavedFailure("INV4", entries=1, new_entries=1, reproduces=True, violation=True,
                           text="INV4 violated")
    assert _report(tmp_path, _tests(INV6=0), _plan(), [failure]).exit_code == EXIT_FAILURE


@pytest.mark.parametrize(
    ("ended_by", "said"),
    [
        ("time box", "stopped at the end of the time box"),
        ("failure found", "stopped at the first saved failure (--stop-on-failure)"),
    ],
)
def test_how_the_session_ended_is_a_sentence(tmp_path: Path, ended_by: str, said: str) -> None:
    text = render_text(_report(tmp_path, _tests(), _plan(), ended_by=ended_by))
    assert said in text.splitlines()[1]
    assert "ended by" not in text


def test_a_test_that_found_a_failure_had_its_share() -> None:
    tests = _tests(INV4=0, INV5=0, INV6=0)
    tests["INV4"] = TargetObservations(shrink_runs=180, failed=180)  # found at once
    found = shortfalls(_plan(), tests, 4.2, failed={"INV5"})  # INV5: the watcher saw one
    assert [s.check_id for s in found] == ["INV6"]
