"""M41 pump-stops-on-fault: a hub's turn whose handler raised does not re-arm its pump.

Pre-fix shape (a message loop that returns from its error branch): `return` at the end of
the `except` in `Hub._turn`, after HANDLER_FAULTED is logged, so the hub's pump stops at a
handler that raised and every message queued behind it waits until another post happens to
wake the hub: with none, it is never handled. Obligation (INV7): "deliveries behind a
raising handler handled".
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import Mutant, MutationCodemod


class PumpStopsOnFault(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("_turn")))
    @m.leave(m.ExceptHandler(type=m.Name("Exception")))
    def stop_pump(
        self, original_node: cst.ExceptHandler, updated_node: cst.ExceptHandler
    ) -> cst.ExceptHandler:
        body = updated_node.body
        assert isinstance(body, cst.IndentedBlock)  # the handler spans lines
        if m.matches(body.body[-1], m.SimpleStatementLine(body=[m.Return()])):
            return updated_node  # applied already
        self.hit()
        stop = cst.SimpleStatementLine(body=[cst.Return()])
        return updated_node.with_changes(body=body.with_changes(body=[*body.body, stop]))


MUTANT = Mutant(
    id="M41",
    slug="pump-stops-on-fault",
    shape="a hub's pump stops at a handler that raised: what is queued behind it waits for "
    "a later post",
    path="hub.py",
    site="Hub._turn",
    target="except Exception as exc:  # a faulting handler is logged; the pump goes on",
    kills=("INV7",),
    writes="return",
    seeds=("raising-handler",),
    codemod=PumpStopsOnFault,
)
