"""The relay: routed parcels travel as counted legs, delayed by a per-link latency table.

A parcel is sealed before it travels (and, with the wire round trip on, encoded and decoded
again). A parcel whose target is missing when it lands is answered NotFound by a nack leg
started inside its own leg, so the gauge never touches zero between the two.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from .inbox import Intake
from .legs import Leg
from .parcels import Parcel, from_wire, seal, to_wire
from .replies import SERVICE_BADGE

if TYPE_CHECKING:
    from .board import Switchboard

RELAY = "relay"


class Relay:
    def __init__(self, board: Switchboard, latency: Mapping[tuple[str, str], int]) -> None:
        self.board = board
        self.latency = dict(latency)
        self.slow: dict[str, int] = {}  # extra delay of every hop to a destination
        self.wire_roundtrip = False

    def hop_ms(self, source: str, destination: str) -> int:
        base = self.latency.get((source, destination), self.board.figures.hop_ms)
        return base + self.slow.get(destination, 0)

    def slow_down(self, destination: str, extra_ms: int) -> None:
        self.slow[destination] = extra_ms

    def package(self, parcel: Parcel) -> Parcel:
        sealed = seal(parcel)
        if self.wire_roundtrip:
            sealed = from_wire(to_wire(sealed))
        if "b13" in self.board.bugs and sealed.badge is None:
            sealed = Parcel(sealed.id, sealed.sender, sealed.target, SERVICE_BADGE, sealed.body,
                            sealed.headers, sealed.subscription)
        return sealed

    def dispatch(self, parcel: Parcel) -> None:
        """Route `parcel` to its target's inbox, or refuse it once the stop has begun."""
        if self.board.closing:
            self.refuse(parcel)
            return
        sealed = self.package(parcel)
        leg = self.board.legs.start("route", sealed)
        hop = self.hop_ms(sealed.sender, sealed.target)
        leg.arm(self.board.later(hop, self._land, leg, sealed))

    def refuse(self, parcel: Parcel) -> None:
        self.board.journal.note(
            "refused_dispatch", inbox=RELAY, parcel=parcel.id, sender=parcel.sender,
            target=parcel.target, kind=parcel.kind, klass=parcel.klass, topic=parcel.topic,
            sealed=parcel.sealed, error="ShuttingDown")
        self.board.replies.bounce(parcel, "ShuttingDown", where=RELAY, local=True)

    def carry_back(self, reply: Parcel) -> None:
        """A notice travelling to the sender it answers, as a nack leg."""
        sealed = self.package(reply)
        leg = self.board.legs.start("nack", sealed)
        hop = self.hop_ms(sealed.sender, sealed.target)
        if "b10" in self.board.bugs:
            self.board.loop.call_later(hop / 1000, self._land, leg, sealed)
            return
        leg.arm(self.board.later(hop, self._land, leg, sealed))

    def _land(self, leg: Leg, parcel: Parcel) -> None:
        inbox = self.board.inboxes.get(parcel.target)
        if inbox is None:
            self.board.replies.bounce(parcel, "NotFound", where=RELAY, local=False)
            self.board.legs.end(leg, "failed")
            return
        outcome = inbox.offer(parcel)
        self.board.legs.end(leg, "gated" if outcome is Intake.GATED else "completed")
