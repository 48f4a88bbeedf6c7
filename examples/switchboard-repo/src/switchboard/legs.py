"""Legs: routed work in flight, counted from dispatch to landing, and the gauge over them.

Every timer a leg arms is kept on the leg, so the stop can cut a leg whole. The stop waits
on the gauge's Condition; legs end in plain callbacks, so a change is announced by a short
notifier task (a Condition is notified with its lock held, which a callback cannot take).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from .parcels import Parcel

if TYPE_CHECKING:
    from .board import Switchboard


class Leg:
    __slots__ = ("id", "kind", "on_cut", "parcel_id", "timers")

    def __init__(self, leg_id: str, kind: str, parcel_id: str) -> None:
        self.id = leg_id
        self.kind = kind  # "route" or "nack"
        self.parcel_id = parcel_id
        self.timers: list[asyncio.TimerHandle] = []
        self.on_cut: Callable[[], None] | None = None

    def arm(self, handle: asyncio.TimerHandle) -> None:
        self.timers.append(handle)


class LegGauge:
    def __init__(self, board: Switchboard) -> None:
        self.board = board
        self._open: dict[str, Leg] = {}  # insertion order: oldest first
        self.changed = asyncio.Condition()
        self._watchers = 0
        self._notifier: asyncio.Task[None] | None = None

    def __len__(self) -> int:
        return len(self._open)

    def oldest_first(self) -> list[Leg]:
        return list(self._open.values())

    def start(self, kind: str, parcel: Parcel) -> Leg:
        leg = Leg(self.board.next_id("L"), kind, parcel.id)
        self._open[leg.id] = leg
        self.board.journal.note(
            "leg_open", leg=leg.id, leg_kind=kind, parcel=parcel.id, depth=len(self._open),
            sender=parcel.sender, target=parcel.target, kind=parcel.kind, klass=parcel.klass,
            sealed=parcel.sealed, sub=parcel.subscription)
        return leg

    def end(self, leg: Leg, why: str) -> None:
        if self._open.pop(leg.id, None) is None:
            return
        for timer in leg.timers:
            timer.cancel()
        leg.timers.clear()
        self.board.journal.note("leg_closed", leg=leg.id, leg_kind=leg.kind,
                                parcel=leg.parcel_id, depth=len(self._open), why=why)
        self.poke()

    def cut_all(self) -> None:
        """End every leg still in flight as drained, cancelling what it had armed."""
        for leg in self.oldest_first():
            if leg.on_cut is not None:
                leg.on_cut()
            self.end(leg, "drained")

    def poke(self) -> None:
        """Wake whoever waits on `changed` (the stop's hold) to re-check its condition."""
        if self._watchers and (self._notifier is None or self._notifier.done()):
            self._notifier = self.board.loop.create_task(self._notify())

    async def _notify(self) -> None:
        async with self.changed:
            self.changed.notify_all()

    async def wait_until(self, condition: Callable[[], bool]) -> None:
        self._watchers += 1
        try:
            async with self.changed:
                if "b07" in self.board.bugs:
                    if not condition():
                        await self.changed.wait()
                    return
                await self.changed.wait_for(condition)
        finally:
            self._watchers -= 1
