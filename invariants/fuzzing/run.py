"""One fuzzing session from start to summary: open the database, run HypoFuzz within the
time box, then gather what it ran, reached and found, and the session's exit code.

Exit codes: `EXIT_NOTHING_FOUND` (0) every selected test ran and nothing failed;
`EXIT_FAILURE` (1) a failure was found (saved in the database); `EXIT_USAGE` (2) bad input
or HypoFuzz exited by itself without finding anything; `EXIT_SHORTFALL` (3) nothing was
found but a selected test got no example (or fewer than `--min-examples`), so the session
did not cover what it was asked to. A found failure outranks a shortfall.

The summary also gives each test's evidence (per obligation, the cases its examples
exercised) and names the obligations a test that ran left unexercised; those are shown,
not counted in the exit code (a session's verdict is whether it found a failure).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from invariants.adapter import FirstChooser
from invariants.adapter_calls import calling_adapter, factory_name
from invariants.capabilities import capabilities_of
from invariants.checks import CHECKS
from invariants.dynamic.database import check_reachable, guarded, open_database
from invariants.fuzzing.behaviours import Coverage, session_coverage
from invariants.fuzzing.config import resolve_factory
from invariants.fuzzing.failures import FailureWatcher, SavedFailure, collect_failures
from invariants.fuzzing.goals import never_reached
from invariants.fuzzing.observed import TargetObservations, read_observed
from invariants.fuzzing.selection import build_machines, check_of, database_key
from invariants.fuzzing.session import SessionPlan, SessionRun, run_session
from invariants.fuzzing.shortfall import Shortfall, ran, shortfalls
from invariants.fuzzing.startup import LOG_NAME as STARTUP_LOG
from invariants.fuzzing.startup import Startup, read_startup

EXIT_NOTHING_FOUND = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_SHORTFALL = 3


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
    startup_seconds: float | None = None  # from the start until the first example ran
    startup: Startup | None = None  # each process's start-up phases
    shortfalls: list[Shortfall] = field(default_factory=list)
    # Per invariant, obligations of an optional capability the adapter lacks -> why.
    inapplicable: dict[str, dict[str, str]] = field(default_factory=dict)

    def evidence(self, check_id: str) -> dict[str, int]:
        """Per obligation of `check_id`, the cases its examples exercised (0 included)."""
        seen = self.tests[check_id].evidence
        return {name: seen.get(f"{check_id}: {name}", 0) for name in CHECKS[check_id].obligations}

    def not_exercised(self, check_id: str) -> list[str]:
        """Obligations no example of a test that ran exercised (a test that never ran is
        a shortfall already; a test that failed stopped early)."""
        seen = self.tests[check_id]
        if not ran(seen) or seen.failed:
            return []
        skip = self.inapplicable.get(check_id, {})
        return [n for n, c in self.evidence(check_id).items() if c == 0 and n not in skip]

    @property
    def never_reached(self) -> list[str]:
        return never_reached(dict(self.goals))

    @property
    def failed(self) -> bool:
        return any(f.reproduces for f in self.failures)

    @property
    def exit_code(self) -> int:
        if self.failed:
            return EXIT_FAILURE
        if self.run.ended_by == "hypofuzz exited":
            return EXIT_USAGE
        return EXIT_SHORTFALL if self.shortfalls else EXIT_NOTHING_FOUND


def run_fuzz(
    plan: SessionPlan, session_dir: Path, environ: Mapping[str, str] | None = None
) -> FuzzReport:
    """Run a session; raises `DatabaseSpecError`/`FuzzConfigError` before starting on bad
    input. `environ` (default `os.environ`) is the workers' environment."""
    database = open_database(plan.config.database)
    check_reachable(database, plan.config.database or "")
    # A server that goes away during the session is one error line, not a traceback.
    database = guarded(database, plan.config.database or "")
    machines = build_machines(plan.config)
    keys = {check: database_key(machine) for check, machine in machines.items()}
    watcher = FailureWatcher(database, keys)
    run = run_session(
        plan, session_dir, new_failure=lambda: bool(watcher.checks_with_new_failures()),
        environ=environ,
    )
    observed = read_observed(session_dir)
    tests: dict[str, TargetObservations] = {check: TargetObservations() for check in machines}
    for nodeid, seen in observed.tests.items():
        check = check_of(nodeid)
        if check in tests:
            tests[check] = seen
    startup = (
        None
        if observed.first_example_at is None
        else max(0.0, observed.first_example_at - run.started_at)
    )
    return FuzzReport(
        plan=plan,
        run=run,
        tests=tests,
        coverage={c: session_coverage(database, k, run.started_at) for c, k in keys.items()},
        goals=observed.goal_counts(),
        examples_per_worker=dict(observed.examples_per_worker),
        failures=collect_failures(watcher, machines),
        skipped_lines=observed.skipped_lines,
        startup_seconds=startup,
        startup=read_startup(session_dir / STARTUP_LOG, run.started_at),
        shortfalls=shortfalls(plan, tests, startup, watcher.checks_with_new_failures()),
        inapplicable=_inapplicable(plan, machines),
    )


def _inapplicable(plan: SessionPlan, machines: Mapping[str, object]) -> dict[str, dict[str, str]]:
    factory = resolve_factory(plan.config)
    with calling_adapter(factory_name(factory), "from its factory"):
        capabilities = capabilities_of(factory(FirstChooser()))
    return {check: CHECKS[check].inapplicable(capabilities) for check in machines}
