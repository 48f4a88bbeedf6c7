"""The staged stop: close intake, hold for legs in flight, then cut what is left.

Stages, in descending order: DRAIN (30) holds a graceful stop until no leg is in flight, the
stop budget expires or the host gives up (waiting on the leg gauge's Condition); DETACH (20)
drops calls still on the wire or held by callees; SEAL (10) closes every inbox's gate; HALT
(0) cuts the legs still in flight and ends the open subscriptions. From the moment the stop
is asked for, the relay and the call desk refuse new dispatches.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from .figures import STAGE_DETACH, STAGE_DRAIN, STAGE_HALT, STAGE_SEAL, STAGES

if TYPE_CHECKING:
    from .board import Switchboard

HOST = "switchboard"


class Shutdown:
    def __init__(self, board: Switchboard, *, graceful: bool) -> None:
        self.board = board
        self.graceful = graceful
        self.given_up = False
        self._budget_spent = False
        self.task: asyncio.Task[None] | None = None

    def give_up(self) -> None:
        """The host stops waiting: a hold in progress ends now, a later one never starts."""
        if self.given_up:
            return
        self.given_up = True
        if "b14" not in self.board.bugs:
            self.board.legs.poke()

    async def run(self) -> None:
        board = self.board
        for stage in STAGES:
            board.journal.note("stage_in", inbox=HOST, stage=stage, depth=len(board.legs))
            if stage == STAGE_DRAIN:
                await self._hold()
            elif stage == STAGE_DETACH:
                board.calls.drop_detached()
            elif stage == STAGE_SEAL:
                board.seal_inboxes()
            elif stage == STAGE_HALT:
                board.legs.cut_all()
                board.subscriptions.end_all("silo_stopped")
            board.journal.note("stage_out", inbox=HOST, stage=stage, depth=len(board.legs))
        board.stopped = True
        board.journal.note("stopped", inbox=HOST)

    async def _hold(self) -> None:
        legs = self.board.legs
        if not self.graceful or self.given_up or not len(legs):
            return
        journal = self.board.journal
        journal.note("hold_begin", inbox=HOST, depth=len(legs))
        budget = self.board.later(self.board.figures.stop_budget_ms, self._spend_budget)
        await legs.wait_until(lambda: not len(legs) or self._budget_spent or self.given_up)
        budget.cancel()
        if not len(legs):
            why = "drained"
        elif self.given_up:
            why = "cancelled"
        else:
            why = "budget"
            for leg in legs.oldest_first():
                journal.note("leftover_leg", inbox=HOST, leg=leg.id, leg_kind=leg.kind,
                             parcel=leg.parcel_id)
        journal.note("hold_end", inbox=HOST, why=why, depth=len(legs))

    def _spend_budget(self) -> None:
        self._budget_spent = True
        self.board.legs.poke()
