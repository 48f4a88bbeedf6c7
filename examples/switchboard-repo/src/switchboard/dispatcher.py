"""The one dispatcher task: round-robin over the inboxes with work, one handler call a turn.

An inbox joins the ring when it has work and is not paused; each turn takes the ring's
first inbox, runs one handler for its oldest parcel and puts it back at the end if it still
has work. With nothing to do the dispatcher sleeps on an Event.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from typing import TYPE_CHECKING

from .inbox import Inbox
from .parcels import Parcel, opened

if TYPE_CHECKING:
    from .board import Switchboard

log = logging.getLogger("switchboard")


class Dispatcher:
    def __init__(self, board: Switchboard) -> None:
        self.board = board
        self._ring: deque[Inbox] = deque()
        self._wake = asyncio.Event()
        self.turns = 0

    def ready(self, inbox: Inbox) -> None:
        """Put `inbox` in the ring if it has work it may run now."""
        if not inbox.scheduled and inbox.runnable():
            inbox.scheduled = True
            self._ring.append(inbox)
            self._wake.set()

    async def run(self) -> None:
        while True:
            if not self._ring:
                self._wake.clear()
                await self._wake.wait()
                continue
            inbox = self._ring.popleft()
            inbox.scheduled = False
            if not inbox.runnable():
                continue  # paused or removed since it joined: its resume puts it back
            parcel = inbox.queue.popleft()
            if "b16" in self.board.bugs:
                await asyncio.sleep(0)
            self._turn(inbox, parcel)
            self.ready(inbox)
            await asyncio.sleep(0)  # one handler call per turn: let arrivals and timers in

    def _turn(self, inbox: Inbox, parcel: Parcel) -> None:
        journal = self.board.journal
        self.turns += 1
        journal.note("served", inbox=inbox.address, parcel=parcel.id, kind=parcel.kind)
        body = opened(parcel)
        handler = inbox.handlers.get(body.kind) or self.board.default_handler(body.kind)
        try:
            handler(parcel, body)
        except Exception as exc:  # a faulting handler is logged; the dispatcher goes on
            log.warning("handler for %s at %s raised %r", body.kind, inbox.address, exc)
            journal.note("handler_crashed", inbox=inbox.address, parcel=parcel.id,
                         error=type(exc).__name__)
