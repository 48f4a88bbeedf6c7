"""Read what the workers ran from Hypothesis' observability output.

A session runs with `HYPOTHESIS_EXPERIMENTAL_OBSERVABILITY` set, so every test case a
worker executes is appended as one JSON line to `.hypothesis/observed/*_testcases.jsonl`
under the session directory: its test (node id), status, phase, worker pid, start time,
how long it ran and the `event()` labels it reached. A line cut short by the shutdown is
skipped and counted.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from invariants.dynamic.judge import EVIDENCE_PREFIX
from invariants.fuzzing.goals import TEARDOWN_LABELS, goal_labels

OBSERVED_GLOB = "*_testcases.jsonl"


@dataclass
class TargetObservations:
    """One fuzz target's test cases."""

    examples: int = 0  # generated or mutated inputs (shrinking excluded)
    shrink_runs: int = 0  # executions spent shrinking a failure
    failed: int = 0
    invalid: int = 0  # gave up (a precondition or filter rejected the input)
    seconds: float = 0.0  # spent running those examples (the sum of Hypothesis' timings)
    goals: Counter[str] = field(default_factory=Counter)
    teardown: Counter[str] = field(default_factory=Counter)
    # "INV4: timed-out deliveries sent once" -> cases, summed over the examples
    evidence: Counter[str] = field(default_factory=Counter)


@dataclass
class Observed:
    tests: dict[str, TargetObservations] = field(default_factory=dict)
    examples_per_worker: Counter[int] = field(default_factory=Counter)  # pid -> examples
    skipped_lines: int = 0
    # Epoch seconds: the earliest `run_start` (when a worker's run of a test began).
    first_example_at: float | None = None

    def goal_counts(self) -> Counter[str]:
        total: Counter[str] = Counter()
        for test in self.tests.values():
            total.update(test.goals)
        return total


def observed_directory(session_dir: Path) -> Path:
    return session_dir / ".hypothesis" / "observed"


def read_observed(session_dir: Path) -> Observed:
    observed = Observed()
    directory = observed_directory(session_dir)
    if not directory.is_dir():
        return observed
    for path in sorted(directory.glob(OBSERVED_GLOB)):
        with path.open(encoding="utf-8", errors="replace") as lines:
            for line in lines:
                record = _parse(line)
                if record is None:
                    observed.skipped_lines += 1
                else:
                    _add(observed, record)
    return observed


def _parse(line: str) -> dict[str, Any] | None:
    try:
        record = json.loads(line)
    except ValueError:
        return None
    if not isinstance(record, dict) or record.get("type") != "test_case":
        return None
    return record


def _is_shrinking(record: dict[str, Any]) -> bool:
    metadata = record.get("metadata") or {}
    return metadata.get("phase") == "shrink" or "shrink" in str(record.get("how_generated", ""))


def _add(observed: Observed, record: dict[str, Any]) -> None:
    test = observed.tests.setdefault(str(record.get("property", "?")), TargetObservations())
    status = record.get("status")
    if status == "failed":
        test.failed += 1
    elif status == "gave_up":
        test.invalid += 1
    if _is_shrinking(record):
        test.shrink_runs += 1
        return
    test.examples += 1
    test.seconds += _seconds(record)
    started = record.get("run_start")
    if isinstance(started, (int, float)) and (
        observed.first_example_at is None or started < observed.first_example_at
    ):
        observed.first_example_at = float(started)
    pid = (record.get("metadata") or {}).get("os.getpid()")
    if isinstance(pid, int):
        observed.examples_per_worker[pid] += 1
    features = record.get("features") or {}
    test.goals.update(goal_labels(features))
    test.teardown.update(label for label in features if label in TEARDOWN_LABELS)
    for label, payload in features.items():
        if label.startswith(EVIDENCE_PREFIX) and isinstance(payload, int):
            test.evidence[label.removeprefix(EVIDENCE_PREFIX)] += payload


def _seconds(record: dict[str, Any]) -> float:
    """The whole run of the test case: Hypothesis splits it into `execute:test` (the test
    body less what is listed beside it), the draws, each rule and invariant of a state
    machine, and garbage collection, so the parts add up to the run."""
    timing = record.get("timing")
    if not isinstance(timing, dict):
        return 0.0
    parts = [v for v in timing.values() if isinstance(v, (int, float))]
    # Derived by subtraction, a case that gave up at once can come out a hair below zero.
    return max(0.0, math.fsum(parts))
