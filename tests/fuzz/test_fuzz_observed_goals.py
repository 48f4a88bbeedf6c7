"""Reading observed test cases, and the list of goals the machines can reach."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from invariants.fuzzing.goals import GOALS, TEARDOWN_LABELS, goal_labels, never_reached
from invariants.fuzzing.observed import observed_directory, read_observed

NODE = "targets.py::TestINV4::runTest"


def _case(status: str, phase: str, pid: int, *labels: str) -> dict[str, Any]:
    return {
        "type": "test_case",
        "property": NODE,
        "status": status,
        "how_generated": f"during {phase} phase",
        "features": {label: "" for label in labels} | {"target:max queue depth": 3},
        "metadata": {"phase": phase, "os.getpid()": pid},
    }


def _write(session: Path, lines: list[str]) -> None:
    directory = observed_directory(session)
    directory.mkdir(parents=True)
    (directory / "2026-01-01_testcases.jsonl").write_text("\n".join(lines) + "\n", "utf-8")


def test_counts_examples_goals_workers_and_skips_cut_lines(tmp_path: Path) -> None:
    cases = [
        _case("passed", "generate", 11, "breaker tripped", "quiescent at teardown"),
        _case("passed", "generate", 12, "breaker tripped", "aggregate shed"),
        _case("gave_up", "generate", 12),
        _case("failed", "generate", 11, "attempt timed out"),
        _case("failed", "shrink", 11, "attempt timed out"),  # shrinking
        {"type": "info", "property": NODE},  # not a test case
    ]
    lines = [json.dumps(c) for c in cases] + ['{"type": "test_case", "prop']  # cut short
    _write(tmp_path, lines)
    observed = read_observed(tmp_path)
    test = observed.tests[NODE]
    assert (test.examples, test.shrink_runs, test.failed, test.invalid) == (4, 1, 2, 1)
    assert dict(test.goals) == {"breaker tripped": 2, "aggregate shed": 1, "attempt timed out": 1}
    assert dict(test.teardown) == {"quiescent at teardown": 1}
    assert dict(observed.examples_per_worker) == {11: 2, 12: 2}
    assert observed.skipped_lines == 2
    assert observed.goal_counts()["breaker tripped"] == 2


def test_no_observations_is_an_empty_result(tmp_path: Path) -> None:
    observed = read_observed(tmp_path)
    assert observed.tests == {} and not observed.examples_per_worker


def test_hypothesis_labels_are_not_goals() -> None:
    features = ["Retried draw from ...", "target:max legs in flight", "aggregate shed"]
    assert goal_labels(features) == ["aggregate shed"]


def test_never_reached_lists_goals_with_no_example() -> None:
    counts = dict.fromkeys(GOALS, 1) | {"stop hold expired": 0}
    assert never_reached(counts) == ["stop hold expired"]
    assert never_reached(dict.fromkeys(GOALS, 1)) == []
    assert never_reached({}) == list(GOALS)


def test_every_label_the_machines_emit_is_a_goal_or_a_teardown_label() -> None:
    machines = pytest.importorskip("invariants.dynamic.judge")
    behaviours = set(machines._BEHAVIOURS.values())
    assert behaviours <= set(GOALS), behaviours - set(GOALS)
    source = Path(machines.__file__).read_text(encoding="utf-8")
    for label in [*GOALS, *TEARDOWN_LABELS]:
        assert f'"{label}"' in source, f"{label!r} is no longer emitted by the judge"


def test_seconds_and_the_first_start_come_from_timing_and_run_start(tmp_path: Path) -> None:
    timed = [
        _case("passed", "generate", 11) | {"timing": {"execute:test": 0.25}, "run_start": 50.0},
        # A state machine's rules and draws are timed beside the test body: all of it counts.
        _case("passed", "generate", 12) | {"timing": {
            "execute:test": 0.125, "execute:rule:fanout": 0.25, "generate:rule:fanout": 0.0625,
            "execute:invariant:safety": 0.0625, "overall:gc": 0.0}, "run_start": 40.0},
        # Hypothesis subtracts to get it: a case that gave up at once may be a hair below 0.
        _case("gave_up", "generate", 12) | {"timing": {"execute:test": -1e-6}, "run_start": 60.0},
        _case("failed", "shrink", 11) | {"timing": {"execute:test": 9.0}, "run_start": 10.0},
    ]
    _write(tmp_path, [json.dumps(c) for c in timed])
    observed = read_observed(tmp_path)
    assert observed.tests[NODE].seconds == pytest.approx(0.75)  # shrinking not counted
    assert observed.first_example_at == 40.0


@pytest.mark.slow
def test_a_machine_reports_its_evidence_as_observed_features(tmp_path: Path) -> None:
    """The path a session reads: each example's evidence, as Hypothesis' observability
    writes it, summed per obligation by `read_observed`."""
    from dataclasses import asdict

    from hypothesis import HealthCheck, settings
    from hypothesis.internal.observability import with_observability_callback
    from hypothesis.stateful import run_state_machine_as_test

    from invariants.dynamic.plans import machine_class
    from reference_impl.adapter import make_adapter

    records: list[dict[str, Any]] = []

    def keep(observation: Any) -> None:
        if observation.type == "test_case":
            records.append(json.loads(json.dumps(asdict(observation), default=str)))

    machine = machine_class("INV4", make_adapter)
    with with_observability_callback(keep):
        run_state_machine_as_test(machine, settings=settings(
            max_examples=15, derandomize=True, database=None,
            suppress_health_check=list(HealthCheck)))
    _write(tmp_path, [json.dumps(r) for r in records])
    seen = read_observed(tmp_path).tests
    evidence = sum((t.evidence for t in seen.values()), start=Counter())
    assert evidence["INV4: timed-out deliveries sent once"] > 0, evidence
    assert all(name.startswith("INV4: ") for name in evidence)
