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
slowdown before the call reaches the callee: one place, for a mesh whose call is a
function call. A mesh whose calls travel (over a network, through a queue) asks its two
halves where each happens, so the slowdown runs on the caller's timeout:

    fault = sending(target)          # as the call leaves, no await before its ATTEMPT:
                                     # None, REJECT_NEXT (the callee must refuse this call)
                                     # or REMOVE_TARGET
    fault = await receiving(target)  # where the callee takes it up: waits out the
                                     # slowdown; None, AGGREGATE_NEXT or TIMEOUT_NEXT

`turn(hub)` waits while a hub's turn is held;
`slowdown(target)` waits out a slow destination; `removed(target)` says whether the
harness removed it.
"""

from __future__ import annotations

import asyncio

from invariants.adapter import Fault, FaultKind
from invariants.aio.rig import current_rig


async def point(target: str) -> Fault | None:
    """The fault this call to `target` meets, or None to proceed (always None in
    production): `sending`, then `receiving`."""
    return sending(target) or await receiving(target)


def sending(target: str) -> Fault | None:
    """The fault a call to `target` meets as it leaves its caller (rejections are spent in
    the order calls are made): `REMOVE_TARGET`, `REJECT_NEXT` (the callee refuses this call:
    it never holds it), or None (always None in production)."""
    rig = current_rig()
    if rig is None:
        return None
    book = rig.faults
    if target in book.removed:
        return Fault(FaultKind.REMOVE_TARGET, target)
    return book.take(FaultKind.REJECT_NEXT, target)


async def receiving(target: str) -> Fault | None:
    """Where the callee takes a call to `target` up: after the target's slowdown, the
    fault the call meets there (spent in the order calls are received): `AGGREGATE_NEXT`,
    `TIMEOUT_NEXT` (received, its reply lost), or None (always None in production)."""
    rig = current_rig()
    if rig is None:
        return None
    await slowdown(target)
    book = rig.faults
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
