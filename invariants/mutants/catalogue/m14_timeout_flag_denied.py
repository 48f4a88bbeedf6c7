"""M14 timeout-flag-denied: the trace reports a timed-out attempt as not timed out.

Pre-fix shape (a self-report lie, Invariant 4 of seed 000): `timed_out=False` in place of
`timed_out=is_timeout(exc)` on the ATTEMPT_FAILED record of `GrainDeliveryOperation._failed`.
The behaviour is right (a timeout is still answered, never re-sent), but the trace says the
callee holds nothing. Obligation: "timed-out deliveries sent once", where whether an attempt
timed out is the harness's fact (TIMEOUT_NEXT, CALL_RECEIVED timing), not the mesh's flag.
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M14",
    slug="timeout-flag-denied",
    shape="a timed-out attempt is traced timed_out=False",
    path="grain.py",
    site="GrainDeliveryOperation._failed",
    before="timed_out=is_timeout(exc)",
    after="timed_out=False",
    kills=("INV4",),
    seeds=("timeout",),
)
