"""The unmutated mesh, measured once: its scan findings and the cost of each check.

A mutation score only means something for a mesh that passes every check, so the
unmutated copy runs them all first; a failure is a `TargetError` naming the check. The
checks' CPU seconds here order each mutant's searches, cheapest first.
"""

from __future__ import annotations

import shutil
import time

from invariants.dynamic.runner import run_invariant
from invariants.mutants.matrix import scan_tree
from invariants.mutants.score.evaluate import (
    Baseline,
    build,
    evidence,
    finding_key,
    forget,
    package_name,
)
from invariants.mutants.score.target import MeshTarget, TargetError


def measure(target: MeshTarget, profile: str) -> Baseline:
    label = "baseline"
    package = package_name(label, target.sources)
    try:
        package_dir, factory = build(target, label, target.sources)
    except Exception as exc:
        raise TargetError(
            f"{target.package}: the unmutated mesh does not import: {type(exc).__name__}: "
            f"{str(exc).splitlines()[0] if str(exc) else ''}"
        ) from None
    try:
        scanned = scan_tree(package_dir, target.scan_config)
        findings = frozenset(finding_key(f) for f in scanned.findings)
        cost: dict[str, float] = {}
        for check in target.checks:
            # CPU time in half-second steps orders the searches; it decides no verdict, and
            # steps keep the order (so which check a kill is credited to) the same under load.
            started = time.process_time()
            outcome = run_invariant(check, factory, profile, params=target.params)
            cost[check] = round((time.process_time() - started) * 2) / 2
            if not outcome.passed:
                raise TargetError(
                    f"{target.package}: the unmutated mesh fails {check} "
                    f"({evidence(outcome)}); fix it before measuring its mutants"
                )
    finally:
        forget(package)
        shutil.rmtree(package_dir, ignore_errors=True)
    order = tuple(sorted(target.checks, key=lambda c: (cost[c], target.checks.index(c))))
    return Baseline(findings, order)
