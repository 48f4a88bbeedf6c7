"""M42 fault-drops-next: a handler that raised takes the next queued message down with it.

Pre-fix shape (a pump that, after a fault, discards what it took as poisoned): `if queue:
queue.popleft()` at the end of the `except` in `Hub._turn`, after HANDLER_FAULTED is
logged, so the message queued behind one whose handler raised is taken off the queue and
never handled, answered nor logged: lost. Obligation (INV7): "deliveries behind a raising
handler handled".
"""

from __future__ import annotations

import libcst as cst

from invariants.mutants.base import Rewrite
from invariants.mutants.catalogue.fault_handler_tail import FaultHandlerTail


class FaultDropsNext(FaultHandlerTail):
    TAIL = cst.parse_statement("if queue:\n    queue.popleft()\n")


MUTANT = Rewrite(
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
