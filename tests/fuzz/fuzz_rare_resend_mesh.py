"""A mesh with M2's pre-fix shape confined to one hub: a fuzzing session's kind of bug.

The delivery retry re-sends a timed-out grain call (it gates on `is_transient`, which
admits timeouts) only when the call went from `peer` to hub `h2`, failed once the mesh had
run 150 virtual seconds and its error is a bare timeout (not an aggregate, which INV4's
machine injects often enough to find it). The seed programs time out bare calls to `h0`
and `h1` only, and `ci`'s runs (16 steps) rarely advance the clock that far first, so
`run_invariant` passes on this mesh; a session (60-step runs) has to find the bug, and CI
can only fail on it by replaying what it saved.

It is M2's codemod narrowed to that hub, applied to a copy of the current reference like
every mutant (not registered: it is a fixture, not a pre-fix shape), so it follows the
reference instead of copying `GrainDeliveryOperation._failed`.

`make_adapter` is its factory: `--adapter fuzz_rare_resend_mesh:make_adapter`.
`make_twin_adapter` makes the same mesh under another name, so another database key: a
failure saved for one is not replayed on the other.
"""

from __future__ import annotations

import dataclasses

import libcst as cst
import libcst.matchers as m
from libcst.codemod.visitors import AddImportsVisitor

from invariants.adapter import Chooser, MeshAdapter
from invariants.mutants.base import MutationCodemod
from invariants.mutants.build import build_mutant
from invariants.mutants.catalogue.m2_resend_timeouts import MUTANT as M2

BUGGY_HUB = "h2"
BUGGY_SENDER = "peer"
# Only once the mesh has run 150 virtual seconds: a long run's bug (five of the longest
# `advance` steps first; the fuzz profile's runs are 60 steps, ci's 16).
BUGGY_FROM_MS = 150_000


class ResendTimeoutsOnOneHub(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("_failed")))
    @m.leave(m.Call(func=m.Name("is_resendable")))
    def gate_on_transient_at_one_hub(
        self, original_node: cst.Call, updated_node: cst.Call
    ) -> cst.BaseExpression:
        self.hit()
        AddImportsVisitor.add_needed_import(self.context, "reference_impl.ladder", "is_transient")
        return cst.parse_expression(
            f'(is_transient(exc) if self.delivery.target == "{BUGGY_HUB}" '
            f'and self.delivery.sender == "{BUGGY_SENDER}" '
            f'and self.router.mesh.scheduler.now >= {BUGGY_FROM_MS} '
            'and not isinstance(exc, BaseExceptionGroup) else is_resendable(exc))'
        )


RARE_RESEND = dataclasses.replace(
    M2, id="M2h2", slug="resend-timeouts-at-h2",
    shape=f"M2's retry gate, from {BUGGY_SENDER} to hub {BUGGY_HUB} only",
    codemod=ResendTimeoutsOnOneHub,
)
_BUILD = build_mutant(RARE_RESEND)


def make_adapter(chooser: Chooser) -> MeshAdapter:
    # A function of this module, so the mesh is keyed by its name, not by the mutant's id.
    return _BUILD.factory(chooser)


def make_twin_adapter(chooser: Chooser) -> MeshAdapter:
    return make_adapter(chooser)
