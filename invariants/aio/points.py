"""Fault points: where mesh code asks the armed faults what happens, a no-op in production.

    fault = await point(target)      # a grain call to `target` is about to be made
    if fault is None: ...            # proceed: the callee receives it, its reply returns
    elif fault.kind is FaultKind.REJECT_NEXT: ...     # refused: the callee never sees it
    elif fault.kind is FaultKind.TIMEOUT_NEXT: ...    # received, but the reply is lost:
                                                      # the caller's own timeout fires
    elif fault.kind is FaultKind.AGGREGATE_NEXT: ...  # received; the caller fails with an
                                                      # aggregate (fault.timeout_first)
    elif fault.kind is FaultKind.REMOVE_TARGET: ...   # the target is gone

`point` spends faults in call order (docs/adapter.md, Grain calls) and takes the target's
slowdown before the call reaches the callee. `turn(hub)` waits while a hub's turn is held;
`slowdown(target)` waits out a slow destination; `removed(target)` says whether the
harness removed it.
"""

from __future__ import annotations

import asyncio

from invariants.adapter import Fault, FaultKind
from invariants.aio.rig import current_rig


async def point(target: str) -> Fault | None:
    """The fault this call to `target` meets, or None to proceed (always None in
    production)."""
    rig = current_rig()
    if rig is None:
        return None
    book = rig.faults
    if target in book.removed:
        return Fault(FaultKind.REMOVE_TARGET, target)
    rejected = book.take(FaultKind.REJECT_NEXT, target)
    if rejected is not None:
        return rejected
    await slowdown(target)
    return book.take(FaultKind.AGGREGATE_NEXT, target) or book.take(
        FaultKind.TIMEOUT_NEXT, target
    )


async def slowdown(target: str) -> None:
    """Take as long as the harness made calls to `target` take."""
    rig = current_rig()
    if rig is not None:
        delay = rig.faults.slow_ms(target)
        if delay:
            await asyncio.sleep(delay / 1000)


async def turn(hub: str) -> None:
    """Wait while `hub`'s turn is held by a `BLOCK_HUB` fault."""
    rig = current_rig()
    if rig is None:
        return
    while rig.faults.blocked(hub):
        await rig.faults.released(hub)


def removed(target: str) -> bool:
    """Whether the harness removed `target` (a `REMOVE_TARGET` fault)."""
    rig = current_rig()
    return rig is not None and target in rig.faults.removed
