"""M41 pump-stops-on-fault: a hub's turn whose handler raised does not re-arm its pump.

Pre-fix shape (a message loop that returns from its error branch): `return` at the end of
the `except` in `Hub._turn`, after HANDLER_FAULTED is logged, so the hub's pump stops at a
handler that raised and every message queued behind it waits until another post happens to
wake the hub: with none, it is never handled. Obligation (INV7): "deliveries behind a
raising handler handled".
"""

from __future__ import annotations

import libcst as cst

from invariants.mutants.base import Rewrite
from invariants.mutants.catalogue.fault_handler_tail import FaultHandlerTail


class PumpStopsOnFault(FaultHandlerTail):
    TAIL = cst.parse_statement("return\n")


MUTANT = Rewrite(
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
