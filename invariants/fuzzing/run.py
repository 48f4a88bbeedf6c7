"""One fuzzing session from start to summary: open the database, run HypoFuzz within the
time box, then gather what it ran, reached and found."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from invariants.dynamic.database import check_reachable, open_database
from invariants.fuzzing.behaviours import Coverage, session_coverage
from invariants.fuzzing.failures import FailureWatcher, SavedFailure, collect_failures
from invariants.fuzzing.goals import never_reached
from invariants.fuzzing.observed import TargetObservations, read_observed
from invariants.fuzzing.selection import build_machines, check_of, database_key
from invariants.fuzzing.session import SessionPlan, SessionRun, run_session


@dataclass
class FuzzReport:
    plan: SessionPlan
    run: SessionRun
    tests: dict[str, TargetObservations]  # by invariant
    coverage: dict[str, Coverage]
    goals: Counter[str]
    examples_per_worker: dict[int, int]
    failures: list[SavedFailure] = field(default_factory=list)
    skipped_lines: int = 0

    @property
    def never_reached(self) -> list[str]:
        return never_reached(dict(self.goals))

    @property
    def failed(self) -> bool:
        return any(f.reproduces for f in self.failures)


def run_fuzz(plan: SessionPlan, session_dir: Path) -> FuzzReport:
    """Run a session; raises `DatabaseSpecError`/`FuzzConfigError` before starting on bad
    input."""
    database = open_database(plan.config.database)
    check_reachable(database, plan.config.database or "")
    machines = build_machines(plan.config)
    keys = {check: database_key(machine) for check, machine in machines.items()}
    watcher = FailureWatcher(database, keys)
    run = run_session(
        plan, session_dir, new_failure=lambda: bool(watcher.checks_with_new_failures())
    )
    observed = read_observed(session_dir)
    tests: dict[str, TargetObservations] = {check: TargetObservations() for check in machines}
    for nodeid, seen in observed.tests.items():
        check = check_of(nodeid)
        if check in tests:
            tests[check] = seen
    return FuzzReport(
        plan=plan,
        run=run,
        tests=tests,
        coverage={c: session_coverage(database, k, run.started_at) for c, k in keys.items()},
        goals=observed.goal_counts(),
        examples_per_worker=dict(observed.examples_per_worker),
        failures=collect_failures(watcher, machines),
        skipped_lines=observed.skipped_lines,
    )
