"""The session summary: goals never reached are said, failures carry their report."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

pytest.importorskip("hypofuzz", reason="needs the fuzz extra: pip install -e '.[fuzz]'")

from invariants.checks import CheckParams
from invariants.fuzzing.behaviours import Coverage
from invariants.fuzzing.config import FuzzConfig
from invariants.fuzzing.failures import SavedFailure
from invariants.fuzzing.goals import GOALS
from invariants.fuzzing.observed import TargetObservations
from invariants.fuzzing.run import FuzzReport
from invariants.fuzzing.session import SessionPlan, SessionRun
from invariants.fuzzing.summary import render_text, report_json


def _report(tmp_path: Path, failures: list[SavedFailure], reached: Counter[str]) -> FuzzReport:
    plan = SessionPlan(FuzzConfig(invariants=("INV4", "INV7"), database="/db"), 4, 60.0)
    run = SessionRun(elapsed=60.0, started_at=1000.0, ended_by="time box", exit_code=None,
                     first_failure_seconds=None, log_path=tmp_path / "log")
    seen = TargetObservations(examples=120, shrink_runs=5, goals=reached)
    return FuzzReport(
        plan=plan, run=run, tests={"INV4": seen, "INV7": TargetObservations()},
        coverage={"INV4": Coverage(7, 3, 2), "INV7": Coverage()}, goals=reached,
        examples_per_worker={101: 80, 102: 40}, failures=failures,
    )


def test_goals_never_reached_are_listed(tmp_path: Path) -> None:
    reached = Counter({goal: 2 for goal in GOALS if goal != "stop hold expired"})
    report = _report(tmp_path, [], reached)
    text = render_text(report)
    assert "never reached: stop hold expired" in text
    assert text.count("NEVER REACHED") == 1
    assert "4 worker(s)" in text  # all used: two per test
    assert "worker 1: 80 (1.3/s)" in text and "worker 2: 40 (0.7/s)" in text
    assert "none found" in text and not report.failed
    data = report_json(report)
    assert data["never_reached"] == ["stop hold expired"]
    assert data["examples_per_worker"] == [80, 40]


def test_figures_other_than_the_seeds_are_named(tmp_path: Path) -> None:
    report = _report(tmp_path, [], Counter())
    assert "params" not in render_text(report) and report_json(report)["params"] == {}
    plan = replace(report.plan, config=replace(
        report.plan.config, params=CheckParams(delivery_retries=2, watermarks={"h0": 4})))
    figured = replace(report, plan=plan)
    assert "  params (other than the seeds'): watermarks={'h0': 4}, delivery_retries=2" in (
        render_text(figured).splitlines())
    assert report_json(figured)["params"] == {"delivery_retries": 2, "watermarks": {"h0": 4}}


def test_a_reproducing_failure_is_printed_and_fails_the_session(tmp_path: Path) -> None:
    failure = SavedFailure("INV4", entries=2, new_entries=1, reproduces=True, violation=True,
                           text="InvariantViolated: INV4 violated\nstate.timeout(count=1)")
    stale = SavedFailure("INV7", entries=1, new_entries=0, reproduces=False, violation=False,
                         text=None)
    report = _report(tmp_path, [failure, stale], Counter(dict.fromkeys(GOALS, 1)))
    text = render_text(report)
    assert report.failed
    assert "- INV4 (new in this session, 2 saved example(s)):" in text
    assert "    state.timeout(count=1)" in text
    assert "- INV7: 1 saved example(s) no longer fail" in text
    assert "every goal was reached" in text


def test_only_stale_failures_do_not_fail_the_session(tmp_path: Path) -> None:
    stale = SavedFailure("INV7", entries=1, new_entries=0, reproduces=False, violation=False,
                         text=None)
    assert not _report(tmp_path, [stale], Counter()).failed


def test_each_test_shows_its_evidence_and_what_it_left_unexercised(tmp_path: Path) -> None:
    report = _report(tmp_path, [], Counter())
    report.tests["INV4"].evidence.update({
        "INV4: timed-out deliveries sent once": 41, "INV4: retry delays timed": 19,
        "INV4: aggregates (timeout first) sent once": 2,
    })
    report.inapplicable["INV4"] = {
        "aggregates (rejection first) sent once": "the adapter declares no aggregate faults"}
    text = render_text(report)
    assert "           41  timed-out deliveries sent once\n" in text
    assert "            0  rejected deliveries re-sent to the budget   NOT EXERCISED" in text
    assert ("            0  aggregates (rejection first) sent once   not applicable: the "
            "adapter declares no aggregate faults") in text
    assert report.not_exercised("INV7") == []  # it never ran: a shortfall, said apart
    data = report_json(report)["tests"]["INV4"]
    assert data["evidence"]["timed-out deliveries sent once"] == 41
    assert data["not_exercised"][0] == "rejected deliveries re-sent to the budget"
    assert "timed-out deliveries sent once" not in data["not_exercised"]
    assert list(data["not_applicable"]) == ["aggregates (rejection first) sent once"]


def test_the_summary_says_the_box_started_after_start_up(tmp_path: Path) -> None:
    from invariants.fuzzing.startup import FIRST_EXAMPLE, HUB_COLLECTED, HUB_IMPORTED, Startup

    report = _report(tmp_path, [], Counter())
    report.run = replace(report.run, startup_seconds=7.2)
    report.startup = Startup(1000.0, hub={HUB_IMPORTED: 1001.0, HUB_COLLECTED: 1003.5},
                             workers={7: {FIRST_EXAMPLE: 1007.2}})
    text = render_text(report)
    assert "  box: 60 s of fuzzing after 7.2 s start-up\n" in text
    assert "  start-up: hub imports 1.0 s, hub collection 2.5 s, first example 3.7 s" in text
    data = report_json(report)
    assert data["box_started_seconds"] == 7.2
    assert data["startup_phases"] == pytest.approx(
        {"hub imports": 1.0, "hub collection": 2.5, "first example": 3.7})
    report.run = replace(report.run, startup_seconds=None)
    assert "box: 60 s of fuzzing after the 60 s start-up limit" in render_text(report)
    report.run = replace(report.run, startup_seconds=None, ended_by="hypofuzz exited")
    assert "box: never started, HypoFuzz exited by itself during start-up" in render_text(report)
