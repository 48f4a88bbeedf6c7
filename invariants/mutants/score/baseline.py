"""The unmutated mesh, measured once: its scan findings, the cost of each check and, where
the profile allows it, the lines each check reaches.

A mutation score only means something for a mesh that keeps adapter-check's conventions
and passes every check, so the unmutated copy runs them all first; a failure is a
`TargetError` naming the convention or the check. The checks' CPU seconds here order each
mutant's searches, cheapest first. With `guided` (and a profile for which
`executed_lines.sound_for` holds) the import, the conformance programs and each check's seed
programs and search run under coverage, so each mutant is judged only by what reaches its
line (`invariants.mutants.score.reach`). Its slowest step sets the mutants' step budget
(`invariants.step_budget.derived_budget`): a mutant that loops for ever is stopped in a
few seconds, not the default twenty.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from invariants.adapter import AdapterFactory
from invariants.dynamic.runner import Outcome, run_invariant, run_program
from invariants.mutants.build import package_name
from invariants.mutants.copies import forget
from invariants.mutants.executed_lines import Recorder, sound_for
from invariants.mutants.matrix import scan_sources
from invariants.mutants.score.evaluate import (
    CONFORMANCE,
    Baseline,
    broken_convention,
    build,
    evidence,
    finding_key,
    seed_programs,
)
from invariants.mutants.score.reach import IMPORT, Reach
from invariants.mutants.score.target import MeshTarget, TargetError
from invariants.step_budget import derived_budget, steps_seen


@contextmanager
def _unmeasured() -> Iterator[Callable[[str], object]]:
    yield lambda _phase: None


def measure(target: MeshTarget, profile: str, *, guided: bool = True) -> Baseline:
    label = "baseline"
    package = package_name(label, target.sources)
    recorder = Recorder(package) if guided and sound_for(profile) else None
    package_dir = None
    try:
        with (recorder.measuring() if recorder is not None else _unmeasured() as phase,
              steps_seen() as seen):
            phase(IMPORT)
            try:
                package_dir, factory = build(target, label, target.sources)
            except Exception as exc:
                raise TargetError(
                    f"{target.package}: the unmutated mesh does not import: "
                    f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                ) from None
            if target.conformance:
                phase(CONFORMANCE)
                if (broken := broken_convention(target, factory)) is not None:
                    raise TargetError(f"{target.package}: the unmutated mesh fails "
                                      f"adapter-check ({broken}); fix it before measuring "
                                      "its mutants")
            cost = {check: _run_check(target, factory, check, profile, phase)
                    for check in target.checks}
            slowest = seen().slowest  # in the block: the measure ends with it
        scanned = scan_sources(target.sources, target.scan_config)  # fills the shared cache
        findings = frozenset(finding_key(f) for f in scanned.findings)
        reach = Reach(recorder.executed(package_dir)) if recorder is not None else None
    finally:
        forget(package)
        if package_dir is not None:
            shutil.rmtree(package_dir, ignore_errors=True)
    order = tuple(sorted(target.checks, key=lambda c: (cost[c], target.checks.index(c))))
    return Baseline(findings, order, reach, derived_budget(slowest))


def _run_check(target: MeshTarget, factory: AdapterFactory, check: str, profile: str,
               phase: Callable[[str], object]) -> float:
    """Run `check`'s seed programs and search on the unmutated mesh (`phase` names it
    for the recorder): the search's CPU seconds; a `TargetError` when either fails."""
    phase(check)
    for name, program in seed_programs(check, factory).items():
        _must_pass(target, check, run_program(check, factory, program, params=target.params,
                                              name=name))
    # CPU time in half-second steps orders the searches; it decides no verdict, and steps
    # keep the order (so which check a kill is credited to) the same under load.
    started = time.process_time()
    _must_pass(target, check, run_invariant(check, factory, profile, params=target.params))
    return round((time.process_time() - started) * 2) / 2


def _must_pass(target: MeshTarget, check: str, outcome: Outcome) -> None:
    if not outcome.passed:
        raise TargetError(
            f"{target.package}: the unmutated mesh fails {check} "
            f"({evidence(outcome)}); fix it before measuring its mutants"
        )
