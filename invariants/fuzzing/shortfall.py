"""Selected tests that did not get their share of a session, and why.

A test with no example (or fewer than the session's `--min-examples` floor) was not
fuzzed, whatever the rest of the session found, so the session says so and exits with
its own code (`EXIT_SHORTFALL`). A test that found a failure has had its share: HypoFuzz
stops fuzzing it there (its examples may all be shrink runs). The reason names the
budget: the worker-seconds of the time box that fall to each test and how long start-up
took before the first example.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from invariants.fuzzing.observed import TargetObservations
from invariants.fuzzing.schedule import share_seconds
from invariants.fuzzing.session import SessionPlan


@dataclass(frozen=True)
class Shortfall:
    check_id: str
    examples: int
    floor: int
    reason: str


def budget_text(plan: SessionPlan, startup_seconds: float | None) -> str:
    tests = len(plan.config.invariants)
    share = share_seconds(plan.seconds, tests, plan.processes)
    minutes = plan.seconds / 60.0
    text = (
        f"a {minutes:g}-minute box on {plan.processes} worker(s) gives each of {tests} "
        f"test(s) {share:.0f} s"
    )
    if startup_seconds is None:
        return text + "; no example ran at all (start-up did not finish in the box)"
    return text + f"; start-up took {startup_seconds:.0f} s"


def ran(seen: TargetObservations) -> bool:
    return seen.examples > 0 or seen.shrink_runs > 0 or seen.failed > 0


def shortfalls(
    plan: SessionPlan,
    tests: Mapping[str, TargetObservations],
    startup_seconds: float | None,
    failed: Collection[str] = (),
) -> list[Shortfall]:
    """The tests short of the floor; `failed`: tests with a new failure saved."""
    floor = max(1, plan.min_examples)
    found = []
    for check_id, seen in tests.items():
        if seen.examples >= floor or seen.failed > 0 or check_id in failed:
            continue
        if not ran(seen):
            head = f"{check_id} never ran"
        else:
            head = (
                f"{check_id} ran {seen.examples} example(s), fewer than "
                f"--min-examples {floor}"
            )
        reason = f"{head}: {budget_text(plan, startup_seconds)}"
        found.append(Shortfall(check_id, seen.examples, floor, reason))
    return found
