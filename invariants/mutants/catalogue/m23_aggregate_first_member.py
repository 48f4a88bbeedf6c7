"""M23 aggregate-first-member: the exception walk follows only an aggregate's first member.

Pre-fix shape (the "InnerException line" walk seed 000 replaced with a graph walk):
`queue.extend(exc.exceptions[:1])` in place of `queue.extend(exc.exceptions)` in
`walk_exception_graph`. A timeout first in an aggregate is still seen; a timeout behind a
rejection is not, so that delivery, which the callee still holds, is re-sent. Obligation
(INV4): "aggregates (rejection first) sent once"; only the harness's AGGREGATE_NEXT fault
with the rejection first can show it.
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M23",
    slug="aggregate-first-member",
    shape="the exception walk reads only an aggregate's first member",
    path="errors.py",
    site="walk_exception_graph",
    before="queue.extend(exc.exceptions)",
    after="queue.extend(exc.exceptions[:1])",
    kills=("INV4",),
    seeds=("aggregate",),
)
