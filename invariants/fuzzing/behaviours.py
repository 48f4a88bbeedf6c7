"""Coverage HypoFuzz measured: distinct behaviours (branches, events, targets) per test.

Each worker saves progress reports in the example database under the test's key; a report
counts the behaviours and fingerprints its worker's corpus covers. Only the reports of
this session are read (a shared database keeps earlier campaigns), and since workers
cover overlapping behaviours the largest count is the session's lower bound.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis.database import ExampleDatabase

from invariants.engine_internals.hypofuzz_database import HypofuzzDatabase


@dataclass(frozen=True)
class Coverage:
    behaviours: int = 0
    fingerprints: int = 0
    workers: int = 0  # workers that reported on this test


def session_coverage(database: ExampleDatabase, key: bytes, since_epoch: float) -> Coverage:
    reports = [
        r for r in HypofuzzDatabase(database).reports.fetch(key) if r.timestamp >= since_epoch
    ]
    if not reports:
        return Coverage()
    return Coverage(
        behaviours=max(r.behaviors for r in reports),
        fingerprints=max(r.fingerprints for r in reports),
        workers=len({r.worker_uuid for r in reports}),
    )
