"""Couriers: every routed letter travels as a counted leg, packaged, and lands or bounces.

The in-flight count is what a graceful stop waits on: a leg is counted from dispatch to
landing, a returning Bounce included.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tinymesh.clock import Timer
from tinymesh.letters import Letter, package

if TYPE_CHECKING:
    from tinymesh.mesh import TinyMesh

HOP_MS = 1  # one courier hop


@dataclass
class Leg:
    id: str
    trip: str  # "carry" (a routed letter) | "return" (a Bounce going back)
    letter: Letter
    timer: Timer | None = None


class Courier:
    def __init__(self, mesh: TinyMesh) -> None:
        self.mesh = mesh
        self.in_flight: dict[str, Leg] = {}  # oldest first
        self.slow: dict[str, int] = {}  # extra ms to reach a target
        self.closing = False  # set by the stop: no new carry legs from then on
        self.on_drained: Callable[[], None] | None = None
        self._legs = 0

    def carry(self, letter: Letter, trip: str = "carry") -> Leg | None:
        mesh = self.mesh
        body = letter.body
        if self.closing and trip == "carry":
            mesh.log.write(mesh.clock.now, "turned_away", letter=letter.id, box="courier",
                           sender=letter.sender, target=letter.target, error="Closing",
                           subject=getattr(body, "subject", None),
                           kind=getattr(body, "kind", None), topic=getattr(body, "topic", None))
            mesh.replies.bounce(letter, "Closing")
            return None
        self._legs += 1
        leg = Leg(f"leg{self._legs}", trip, package(letter))
        self.in_flight[leg.id] = leg
        mesh.log.write(mesh.clock.now, "leg_open", leg=leg.id, trip=trip, letter=letter.id,
                       depth=len(self.in_flight), sender=letter.sender, target=letter.target,
                       subject=getattr(body, "subject", None), kind=getattr(body, "kind", None),
                       blob=True, watch=letter.watch)
        delay = HOP_MS + self.slow.get(letter.target, 0)
        leg.timer = mesh.clock.after(delay, lambda: self._land(leg))
        return leg

    def _land(self, leg: Leg) -> None:
        box = self.mesh.boxes.get(leg.letter.target)
        if box is None:
            self.mesh.replies.bounce(leg.letter, "NoSuchHub")
            self._close(leg, "lost")
            return
        box.offer(leg.letter)
        self._close(leg, "landed")

    def cut(self) -> None:
        """The stop's detach stage: whatever is still in flight will not land."""
        for leg in list(self.in_flight.values()):
            if leg.timer is not None:
                leg.timer.cancel()
            self._close(leg, "cut")

    def _close(self, leg: Leg, how: str) -> None:
        if self.in_flight.pop(leg.id, None) is None:
            return
        self.mesh.log.write(self.mesh.clock.now, "leg_close", leg=leg.id, trip=leg.trip,
                            letter=leg.letter.id, depth=len(self.in_flight), how=how)
        if not self.in_flight and self.on_drained is not None:
            self.on_drained()
