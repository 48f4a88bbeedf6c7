"""M42 fault-drops-next: a handler that raised takes the next queued message down with it.

Pre-fix shape (a pump that, after a fault, discards what it took as poisoned): `if queue:
queue.popleft()` at the end of the `except` in `Hub._turn`, after HANDLER_FAULTED is
logged, so the message queued behind one whose handler raised is taken off the queue and
never handled, answered nor logged: lost. Obligation (INV7): "deliveries behind a raising
handler handled".
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import Mutant, MutationCodemod

_DISCARD = cst.parse_statement("if queue:\n    queue.popleft()\n")


class FaultDropsNext(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("_turn")))
    @m.leave(m.ExceptHandler(type=m.Name("Exception")))
    def discard(
        self, original_node: cst.ExceptHandler, updated_node: cst.ExceptHandler
    ) -> cst.ExceptHandler:
        body = updated_node.body
        assert isinstance(body, cst.IndentedBlock)  # the handler spans lines
        if body.body[-1].deep_equals(_DISCARD):
            return updated_node  # applied already
        self.hit()
        return updated_node.with_changes(body=body.with_changes(body=[*body.body, _DISCARD]))


MUTANT = Mutant(
    id="M42",
    slug="fault-drops-next",
    shape="a handler that raised takes the next queued message down with it, unhandled and "
    "unlogged",
    path="hub.py",
    site="Hub._turn",
    target="except Exception as exc:  # a faulting handler is logged; the pump goes on",
    kills=("INV7",),
    writes="queue.popleft()",
    seeds=("raising-handler",),
    codemod=FaultDropsNext,
)
