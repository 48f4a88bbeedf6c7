"""`check`'s row of a failing invariant, from its outcome: the text shows the whole failure
(step program, Mermaid diagram, the virtual loop's schedule, every line of it) and the JSON
carries each as a field, with every obligation and its count. Built here from failure
texts shaped as the runner writes them (a seed program's, the search's), so each shape is
judged in milliseconds; tests/plugin/test_check_counterexample.py runs the real ones."""

from __future__ import annotations

import json
from pathlib import Path

from harness.jobs.check.report import CheckResult, render, to_json
from harness.rows.build import row_of
from harness.rows.counterexample import counterexample_of
from harness.scan_verdict import run_scan
from invariants.checks import CHECKS
from invariants.dynamic.report import (
    failure_note,
    reproduce_decorator,
    schedule_note,
    step_program,
)
from invariants.dynamic.runner import Outcome
from invariants.scan.model import ScanConfig

VIOLATION = "INV1: DeliveryFailure answers rejected post d1 (a rejection has no reply)"
DIAGRAM = "sequenceDiagram\n    title INV1 counterexample\n    participant P0 as client\n"
# The virtual loop's schedule as docs/asyncio.md shows it: an overtake and a hold.
SCHEDULE = ("FIFO except:\n"
            "  at t=100 ms (step 3), ran timer:answer before timer:Timeout._on_timeout(Task-1)\n"
            "  at t=100 ms (step 3), held back timer:Timeout._on_timeout(Task-1) behind "
            "timer:answer")
BLOB = "@reproduce_failure('6.155.2', b'AXicY2BgZGBgAAAAFQAC')"
SEARCH_PROGRAM = ("state = INV1Machine()\n"
                  "state.init(watermarks=(4, 4, 4), swarm={'block': True,\n"
                  "    'timeout': False}, scenario=None)\n"
                  "state.safety()\n"
                  "state.anonymous(sender='client', to='h0')\n"
                  "state.safety()")
SEED_PROGRAM = ("state = INV1Machine()\n"
                "state.init(watermarks=(None, None, None), swarm={}, scenario=None)\n"
                "state.safety()\n"
                "state.teardown()")


def _search_text() -> str:
    """A search's failure text: Hypothesis' program with the judge's notes inside it."""
    return "\n".join([
        "InvariantViolated: INV1 violated:", VIOLATION, "Falsifying example:", SEARCH_PROGRAM,
        failure_note(DIAGRAM, None), schedule_note(SCHEDULE), "state.teardown()", "",
        f"You can reproduce this example by temporarily adding {BLOB} as a decorator on "
        "your test case",
    ])


def _seed_text() -> str:
    return "\n".join(["INV1 violated:", VIOLATION, "Seed program 'rejection':", SEED_PROGRAM,
                      failure_note(DIAGRAM, None), schedule_note("FIFO")])


def _outcome(text: str | None, *, verdict: str = "violation", seed: str | None = None,
             schedule: str | None = SCHEDULE, steps: int | None = 3) -> Outcome:
    return Outcome("INV1", verdict, examples=4, shrunk_steps=steps,  # type: ignore[arg-type]
                   failure_text=text, seconds=0.5,
                   diagram=DIAGRAM if verdict == "violation" else None,
                   schedule=schedule, seed_program=seed,
                   evidence={"anonymous posts rejected once and dropped": 7})


def _result(*outcomes: Outcome) -> CheckResult:
    scan = run_scan([], ScanConfig(), Path("."), cache_dir=None, baseline=None)
    return CheckResult("ci", scan, [row_of(o) for o in outcomes], None)


def test_the_step_program_is_read_out_without_the_notes_inside_it() -> None:
    assert step_program(_search_text()) == SEARCH_PROGRAM + "\nstate.teardown()"
    assert step_program(_seed_text()) == SEED_PROGRAM
    # The control: a text with no step program (the run's counts) has none to read.
    assert step_program(f"INV4: {VIOLATION}\nEvery example passed alone") is None
    assert reproduce_decorator(_search_text()) == BLOB
    assert reproduce_decorator(_seed_text()) is None


def test_a_search_failure_row_shows_program_diagram_and_every_schedule_line() -> None:
    text = render(_result(_outcome(_search_text())))
    rows = text.splitlines()
    start = rows.index(f"        {VIOLATION}")
    shown = [line[8:] for line in rows[start:]]
    assert "Falsifying example:" in shown and "state = INV1Machine()" in shown
    assert "    'timeout': False}, scenario=None)" in shown  # a continued argument
    assert "```mermaid" in shown and "    title INV1 counterexample" in shown
    schedule = f"Schedule of the failing run (virtual loop): {SCHEDULE}".splitlines()
    at = shown.index(schedule[0])
    assert shown[at:at + 3] == schedule
    assert f"You can reproduce this example by temporarily adding {BLOB} as a decorator on " \
           "your test case" in shown
    assert shown.count(VIOLATION) == 1  # the first line is not repeated under it


def test_the_json_carries_the_counterexample_and_every_obligation() -> None:
    search, seed = _outcome(_search_text()), _outcome(_seed_text(), seed="rejection",
                                                      schedule="FIFO", steps=1)
    document = json.loads(to_json(_result(search, seed)))
    first, second = document["invariants"]
    assert first["counterexample"] == {
        "examples": 4, "steps": 3, "seed_program": None,
        "program": SEARCH_PROGRAM + "\nstate.teardown()", "schedule": SCHEDULE,
        "diagram": DIAGRAM, "reproduce": BLOB, "found_by": None, "replayed": True,
    }
    assert second["counterexample"]["seed_program"] == "rejection"
    assert second["counterexample"]["program"] == SEED_PROGRAM
    assert second["counterexample"]["reproduce"] is None
    # Every obligation, counted or not (the outcome counted one of them).
    assert [o["obligation"] for o in first["obligations"]] == list(CHECKS["INV1"].obligations)
    assert {o["obligation"]: o["exercised"] for o in first["obligations"]} == {
        name: 7 if name == "anonymous posts rejected once and dropped" else 0
        for name in CHECKS["INV1"].obligations
    }


def test_a_passing_row_has_no_counterexample() -> None:
    passed = Outcome("INV1", "pass", 60, None, None, 0.5,
                     evidence=dict.fromkeys(CHECKS["INV1"].obligations, 3))
    document = json.loads(to_json(_result(passed)))
    assert document["invariants"][0]["counterexample"] is None
    text = render(_result(passed))
    assert "state = " not in text and "```mermaid" not in text
    assert "Schedule of the failing run" not in text
    assert counterexample_of(passed) is None


def test_an_error_shows_its_step_program_and_a_contradiction_has_none() -> None:
    error_text = ("KeyError: 'h0'\nFalsifying example:\nstate = INV1Machine()\n"
                  "state.stop(graceful=True)")
    error = _outcome(error_text, verdict="error", schedule=None, steps=None)
    found = counterexample_of(error)
    assert found is not None and found.program == "state = INV1Machine()\n" \
                                                  "state.stop(graceful=True)"
    assert "        Falsifying example:" in render(_result(error))
    counts = _outcome("INV4 violated:\nINV4: retries and answers disagree\nEvery example "
                      "passed alone; the run's counts contradict each other:", steps=None)
    assert counterexample_of(counts) is None
    assert "        Every example passed alone; the run's counts contradict each other:" \
        in render(_result(counts))
