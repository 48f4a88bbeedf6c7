"""Undeliverable notices: the one place a failure to deliver is answered.

At most one notice per parcel id, ever; never for a parcel whose envelope (or, unsealed, its
body) says it must not be answered; none once the switchboard has stopped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .parcels import Klass, Parcel, Undeliverable

if TYPE_CHECKING:
    from .board import Switchboard

SERVICE_BADGE = "switchboard"  # the identity the switchboard's own parcels carry


class ReplyDesk:
    def __init__(self, board: Switchboard) -> None:
        self.board = board
        self._answered: dict[str, None] = {}
        self.sent = 0

    def bounce(self, parcel: Parcel, error: str, *, where: str, local: bool) -> None:
        """Tell `parcel`'s sender it could not be delivered: locally, or as a nack leg."""
        journal = self.board.journal
        if not parcel.answerable() and not (
                "b05" in self.board.bugs and parcel.klass is Klass.CHATTER):
            journal.note("reply_withheld", parcel=parcel.id, why="may_answer_false",
                         klass=parcel.klass, sealed=parcel.sealed)
            return
        if self.board.stopped:
            journal.note("reply_withheld", parcel=parcel.id, why="silo_stopped")
            return
        if parcel.id in self._answered:
            journal.note("reply_withheld", parcel=parcel.id, why="already_answered")
            return
        self._answered[parcel.id] = None
        reply = Parcel(self.board.next_id("p"), parcel.target, parcel.sender, SERVICE_BADGE,
                       Undeliverable(parcel.id, error))
        self.sent += 1
        journal.note("bounced", inbox=where, parcel=reply.id, answers=parcel.id, error=error,
                     sender=reply.sender, target=reply.target)
        if not local:
            self.board.relay.carry_back(reply)
            return
        inbox = self.board.inboxes.get(reply.target)
        if inbox is None:
            self.bounce(reply, "NotFound", where=where, local=True)  # withheld: a notice
            return
        inbox.offer(reply)
