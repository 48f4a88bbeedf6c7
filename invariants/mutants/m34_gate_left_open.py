"""M34 gate-left-open: the RuntimeServices stage leaves every hub's teardown gate open.

Pre-fix shape (seed 001's stage table without `messageCenter.BlockApplicationMessages()`):
`_block_application_messages` calls `done()` without closing the hubs' gates, so once the
stop has run, an application message posted straight to a hub's intake is still queued
and handled. The negative control of INV5's "application messages offered at a closed
teardown gate refused".
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import Mutant, MutationCodemod

_CLOSE_GATES = m.For(
    body=m.IndentedBlock(body=[m.SimpleStatementLine(body=[m.Assign(
        targets=[m.AssignTarget(target=m.Attribute(attr=m.Name("gated")))],
        value=m.Name("True"),
    )])]),
)


class GateLeftOpen(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("_block_application_messages")))
    @m.leave(_CLOSE_GATES)
    def leave_open(self, original_node: cst.For, updated_node: cst.For) -> cst.RemovalSentinel:
        self.hit()
        return cst.RemoveFromParent()


MUTANT = Mutant(
    id="M34",
    slug="gate-left-open",
    shape="the stop never closes the hubs' teardown gates",
    path="lifecycle.py",
    site="Silo._block_application_messages",
    target="for address in sorted(self.mesh.hubs): self.mesh.hubs[address].gated = True",
    kills=("INV5",),
    writes="",
    removes="self.mesh.hubs[address].gated = True",
    seeds=("gate-closed",),
    codemod=GateLeftOpen,
)
