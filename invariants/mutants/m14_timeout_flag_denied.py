"""M14 timeout-flag-denied: the trace reports a timed-out attempt as not timed out.

Pre-fix shape (a self-report lie, Invariant 4 of seed 000): `timed_out=False` in place of
`timed_out=is_timeout(exc)` on the ATTEMPT_FAILED record of `GrainDeliveryOperation._failed`.
The behaviour is right (a timeout is still answered, never re-sent), but the trace says the
callee holds nothing. Obligation: "timed-out deliveries sent once", where whether an attempt
timed out is the harness's fact (TIMEOUT_NEXT, CALL_RECEIVED timing), not the mesh's flag.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import Mutant, MutationCodemod

_FLAG = m.Arg(keyword=m.Name("timed_out"), value=m.Call(func=m.Name("is_timeout")))


class TimeoutFlagDenied(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("_failed")))
    @m.leave(_FLAG)
    def deny_timeout(self, original_node: cst.Arg, updated_node: cst.Arg) -> cst.Arg:
        self.hit()
        return updated_node.with_changes(value=cst.Name("False"))


MUTANT = Mutant(
    id="M14",
    slug="timeout-flag-denied",
    shape="a timed-out attempt is traced timed_out=False",
    path="grain.py",
    site="GrainDeliveryOperation._failed",
    target="timed_out=is_timeout(exc)",
    kills=("INV4",),
    writes="timed_out=False",
    removes="timed_out=is_timeout(exc)",
    seeds=("timeout",),
    codemod=TimeoutFlagDenied,
)
