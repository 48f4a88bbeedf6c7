"""M2 resend-timeouts: the non-idempotent delivery retry gates on `is_transient`.

Pre-fix shape (#1172): `if is_transient(exc) and attempt < ...:` in place of
`is_resendable(exc)`. `is_transient` admits timeouts, so a call the callee still holds
is sent again, up to 7 times.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m
from libcst.codemod.visitors import AddImportsVisitor

from invariants.mutants.base import MutationCodemod, Rewrite


class ResendTimeouts(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("_failed")))
    @m.leave(m.Call(func=m.Name("is_resendable")))
    def gate_on_transient(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        self.hit()
        AddImportsVisitor.add_needed_import(self.context, "reference_impl.ladder", "is_transient")
        return updated_node.with_changes(func=cst.Name("is_transient"))


MUTANT = Rewrite(
    id="M2",
    slug="resend-timeouts",
    shape="delivery retry gated on is_transient",
    path="grain.py",
    site="GrainDeliveryOperation._failed",
    target="is_resendable(exc)",
    kills=("MESH003", "INV4"),
    writes="if is_transient(exc) and attempt",
    removes="if is_resendable(exc) and attempt",
    seeds=("timeout",),
    codemod=ResendTimeouts,
)
