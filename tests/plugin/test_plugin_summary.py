"""The terminal summary from the results items attach to their reports."""

from __future__ import annotations

from harness.summary import Summary


def test_an_empty_summary_says_nothing() -> None:
    summary = Summary()
    assert summary.empty() and summary.lines() == []


def test_findings_per_rule_and_invariants_per_adapter() -> None:
    summary = Summary()
    summary.add({"kind": "scan", "path": "a.py", "rules": {}, "errors": 0})
    summary.add({"kind": "scan", "path": "b.py", "rules": {"MESH004": 2, "MESH001": 1},
                 "errors": 0})
    summary.add({"kind": "scan", "path": "c.py", "rules": {}, "errors": 1})
    summary.add({"kind": "scan-tree", "files": 3, "cached": 2, "suppressed": 1, "baselined": 4,
                 "emit_sites": 5, "rules": {"MESH000": 1}, "errors": 0})
    summary.add({"kind": "invariant", "check": "INV1", "adapter": "a:f", "verdict": "pass"})
    summary.add({"kind": "invariant", "check": "INV2", "adapter": "a:f", "verdict": "violation"})
    summary.add({"kind": "invariant", "check": "INV1", "adapter": "b:g", "verdict": "error"})
    assert summary.lines() == [
        "scan: 3 file(s), 4 finding(s) in 2 file(s), 1 error(s); 1 suppressed, 4 baselined, "
        "2 of 3 from cache, 5 emit site(s)",
        "  MESH000 parse-error: 1",
        "  MESH001 unguarded-failure-emit: 1",
        "  MESH004 detached-subscription: 2",
        "invariants on a:f: 1 passed, 1 failed: INV2 (violation)",
        "invariants on b:g: 0 passed, 1 failed: INV1 (error)",
    ]


def test_the_kill_matrix_lines() -> None:
    summary = Summary()
    summary.add({"kind": "mutant", "mutant": "M2 resend-timeouts", "verdict": "killed",
                 "detail": "by MESH003, INV4"})
    summary.add({"kind": "mutant", "mutant": "M3 unbounded-resubscribe", "verdict": "survived",
                 "detail": "(missed by INV2)"})
    assert summary.lines() == [
        "kill matrix: 1 of 2 mutant(s) killed",
        "  M2 resend-timeouts: killed by MESH003, INV4",
        "  M3 unbounded-resubscribe: survived (missed by INV2)",
    ]
