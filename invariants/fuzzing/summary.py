"""The text and JSON summary of a fuzzing session."""

from __future__ import annotations

from typing import Any

from invariants.checks import changed_figures
from invariants.fuzzing.failures import SavedFailure
from invariants.fuzzing.failures import as_json as failure_json
from invariants.fuzzing.goals import GOALS
from invariants.fuzzing.run import FuzzReport
from invariants.fuzzing.session import STARTUP_LIMIT_SECONDS
from invariants.fuzzing.shortfall import ran

# How a session ended, said as a sentence (`SessionRun.ended_by` is the JSON's value).
ENDINGS = {
    "time box": "stopped at the end of the time box",
    "failure found": "stopped at the first saved failure (--stop-on-failure)",
    "hypofuzz exited": "HypoFuzz exited by itself",
}


def _rate(count: int, seconds: float) -> float:
    return count / seconds if seconds > 0 else 0.0


def ending(ended_by: str) -> str:
    return ENDINGS.get(ended_by, ended_by)


def box_text(report: FuzzReport) -> list[str]:
    """When the box's clock started (after start-up: every worker had run an example), and
    what start-up was spent on."""
    run, seconds = report.run, report.plan.seconds
    if run.startup_seconds is not None:
        lines = [f"box: {seconds:.0f} s of fuzzing after {run.startup_seconds:.1f} s start-up"]
    elif run.ended_by == "time box":
        lines = [f"box: {seconds:.0f} s of fuzzing after the {STARTUP_LIMIT_SECONDS:.0f} s "
                 "start-up limit (a worker had run no example by then)"]
    else:
        lines = [f"box: never started, {ending(run.ended_by)} during start-up"]
    phases = report.startup.breakdown() if report.startup is not None else {}
    if phases:
        lines.append("start-up: " + ", ".join(f"{phase} {spent:.1f} s"
                                              for phase, spent in phases.items())
                     + " (a worker's phase: the slowest worker's)")
    return lines


def render_text(report: FuzzReport) -> str:
    lines = [
        *_session_section(report),
        "",
        *_tests_section(report),
        "",
        *_evidence_section(report),
        "",
        *_workers_section(report),
        "",
        *_goals_section(report),
        "",
        *_failures_section(report),
        "",
        *_coverage_section(report),
        *_exit_section(report),
    ]
    return "\n".join(lines)


def _found(report: FuzzReport) -> list[SavedFailure]:
    """The saved failures that still fail."""
    return [f for f in report.failures if f.reproduces]


def _session_section(report: FuzzReport) -> list[str]:
    """What was fuzzed, on how many workers, for how long, and how the session ended."""
    plan, run = report.plan, report.run
    lines = [
        f"fuzz session: {plan.config.subject}, invariants {', '.join(plan.config.invariants)}",
        f"  database {plan.config.database}, {plan.processes} worker(s), "
        f"time box {plan.seconds:.0f} s, ran {run.elapsed:.1f} s, {ending(run.ended_by)}",
    ]
    lines += [f"  {line}" for line in box_text(report)]
    figures = changed_figures(plan.config.params)
    if figures:  # the seeds' figures go unsaid
        shown = ", ".join(f"{name}={value!r}" for name, value in figures.items())
        lines.append(f"  params (other than the seeds'): {shown}")
    if report.startup_seconds is not None:
        lines.append(f"  first example ran {report.startup_seconds:.1f} s after the start")
    if run.first_failure_seconds is not None:
        saved = run.first_failure_seconds
        lines.append(f"  first new failure saved after {saved:.1f} s")
    return lines


def _tests_section(report: FuzzReport) -> list[str]:
    """One row per test: its examples, time, shrinking, goals and corpus."""
    header = f"  {'test':<6} {'examples':>9} {'seconds':>8} {'shrink':>7} {'invalid':>8} "
    lines = ["per test:", header + f"{'goals':>6} {'behaviours':>11} {'fingerprints':>13}"]
    short = {s.check_id for s in report.shortfalls}
    for check, seen in report.tests.items():
        coverage = report.coverage.get(check)
        lines.append(
            f"  {check:<6} {seen.examples:>9} {seen.seconds:>8.1f} "
            f"{seen.shrink_runs:>7} {seen.invalid:>8} {len(seen.goals):>6} "
            f"{coverage.behaviours if coverage else 0:>11} "
            f"{coverage.fingerprints if coverage else 0:>13}"
            + ("" if check not in short else "   TOO FEW" if ran(seen) else "   NEVER RAN")
        )
    lines.append(
        "  (goals: distinct behaviours reached; behaviours/fingerprints: HypoFuzz's "
        "coverage-guided corpus, which keeps only behaviours stable on re-execution; "
        "seconds: spent running the test's examples)"
    )
    return lines


def _evidence_section(report: FuzzReport) -> list[str]:
    """Per test and obligation, the cases exercised; the unexercised and inapplicable said."""
    lines = ["evidence (per obligation, the cases the examples exercised):"]
    for check in report.tests:
        inapplicable = report.inapplicable.get(check, {})
        unexercised = set(report.not_exercised(check))
        lines.append(f"  {check}:")
        for name, count in report.evidence(check).items():
            mark = ("   NOT EXERCISED" if name in unexercised
                    else f"   not applicable: {inapplicable[name]}" if name in inapplicable
                    else "")
            lines.append(f"    {count:>9}  {name}{mark}")
    return lines


def _workers_section(report: FuzzReport) -> list[str]:
    """Each worker's examples and rate over the session."""
    lines = ["per worker (examples, examples/s):"]
    for index, (_pid, count) in enumerate(sorted(report.examples_per_worker.items()), 1):
        lines.append(f"  worker {index}: {count} ({_rate(count, report.run.elapsed):.1f}/s)")
    if not report.examples_per_worker:
        lines.append("  no test case was observed")
    return lines


def _goals_section(report: FuzzReport) -> list[str]:
    """How many examples reached each goal; the goals never reached named."""
    lines = ["goals (examples that reached each behaviour):"]
    for goal in GOALS:
        count = report.goals.get(goal, 0)
        lines.append(f"  {goal:<30} {count:>7}" + ("   NEVER REACHED" if count == 0 else ""))
    missing = report.never_reached
    lines.append(
        f"  never reached: {', '.join(missing)}" if missing else "  every goal was reached"
    )
    if report.skipped_lines:
        lines.append(f"  ({report.skipped_lines} unreadable observation line(s) skipped)")
    return lines


def _failures_section(report: FuzzReport) -> list[str]:
    """The failures that reproduce, with their report; then the saved ones that no longer fail."""
    lines = ["failures:"]
    found = _found(report)
    for failure in found:
        origin = "new in this session" if failure.new_entries else "saved earlier"
        lines.append(f"- {failure.check_id} ({origin}, {failure.entries} saved example(s)):")
        lines += ["    " + line for line in (failure.text or "").splitlines()]
    for failure in report.failures:
        if not failure.reproduces:
            lines.append(f"- {failure.check_id}: {failure.entries} saved example(s) no longer fail")
    if not found:
        lines.append("  none found")
    return lines


def _coverage_section(report: FuzzReport) -> list[str]:
    """The selected tests that got too few examples, or that every one had its floor."""
    lines = ["coverage of the selected tests:"]
    lines += [f"  {s.reason}" for s in report.shortfalls]
    if not report.shortfalls:
        floor = max(1, report.plan.min_examples)
        lines.append(f"  every selected test ran at least {floor} example(s)")
    return lines


def _exit_section(report: FuzzReport) -> list[str]:
    """When HypoFuzz exited by itself and nothing was found: its exit code and log's end."""
    run = report.run
    if run.ended_by != "hypofuzz exited" or _found(report):
        return []
    return ["", f"HypoFuzz exited with code {run.exit_code}; its log ends with:",
            *("    " + line for line in run.log_tail().splitlines())]


def report_json(report: FuzzReport) -> dict[str, Any]:
    plan, run = report.plan, report.run
    return {
        "subject": plan.config.subject,
        "invariants": list(plan.config.invariants),
        "database": plan.config.database,
        "params": changed_figures(plan.config.params),  # {}: the seeds' figures
        "workers": plan.processes,
        "time_box_seconds": plan.seconds,
        "elapsed_seconds": run.elapsed,
        "ended_by": run.ended_by,
        "first_failure_seconds": run.first_failure_seconds,
        "startup_seconds": report.startup_seconds,
        "box_started_seconds": run.startup_seconds,  # None: at the start-up limit
        "startup_phases": report.startup.breakdown() if report.startup is not None else {},
        "min_examples": plan.min_examples,
        "slice_seconds": plan.slice_seconds,
        "tests": {
            check: {
                "ran": ran(seen),
                "examples": seen.examples,
                "seconds": round(seen.seconds, 3),
                "goals_reached": sorted(seen.goals),
                "shrink_runs": seen.shrink_runs,
                "invalid": seen.invalid,
                "failed_runs": seen.failed,
                "goals": dict(seen.goals),
                "evidence": report.evidence(check),
                "not_exercised": report.not_exercised(check),
                "not_applicable": dict(report.inapplicable.get(check, {})),
                "behaviours": report.coverage[check].behaviours,
                "fingerprints": report.coverage[check].fingerprints,
            }
            for check, seen in report.tests.items()
        },
        "examples_per_worker": [n for _pid, n in sorted(report.examples_per_worker.items())],
        "goals": {goal: report.goals.get(goal, 0) for goal in GOALS},
        "never_reached": report.never_reached,
        "failures": [failure_json(f) for f in report.failures],
        "failed": report.failed,
        "shortfalls": [
            {"check": s.check_id, "examples": s.examples, "floor": s.floor, "reason": s.reason}
            for s in report.shortfalls
        ],
        "exit_code": report.exit_code,
    }

