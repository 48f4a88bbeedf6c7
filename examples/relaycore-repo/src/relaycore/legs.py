"""Routed work in flight: every leg is counted from dispatch until it lands, fails or is cut.

The count is what the stop holds on; each leg keeps the means to cut itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from relaycore.frames import Frame, diagnostic_key

if TYPE_CHECKING:
    from relaycore.relay import Relay


@dataclass(eq=False)
class Leg:
    id: str
    kind: str  # "route" or "nack"
    delivery_id: str
    hub: str
    cut: Callable[[], None] | None = None
    open: bool = True


class Gauge:
    def __init__(self, relay: Relay) -> None:
        self._relay = relay
        self._open: dict[str, Leg] = {}  # insertion order: oldest first

    @property
    def count(self) -> int:
        return len(self._open)

    def in_flight(self) -> list[Leg]:
        """The open legs, oldest first."""
        return list(self._open.values())

    def open(self, kind: str, frame: Frame, hub: str) -> Leg:
        leg = Leg(self._relay.next_id("L"), kind, frame["id"], hub)
        self._open[leg.id] = leg
        self._relay.tel("leg_started", hub=hub, leg_id=leg.id, leg_kind=kind,
                        delivery_id=frame["id"], depth=self.count, sender=frame["src"],
                        target=frame["dst"], message_type=frame["type"],
                        message_class=frame["cls"], packaged=frame["wire"],
                        diagnostic_key=diagnostic_key(frame), subscription_id=frame["sub"])
        return leg

    def close(self, leg: Leg, reason: str) -> None:
        if not leg.open:
            return
        leg.open = False
        leg.cut = None
        del self._open[leg.id]
        self._relay.tel("leg_ended", hub=leg.hub, leg_id=leg.id, leg_kind=leg.kind,
                        delivery_id=leg.delivery_id, depth=self.count, reason=reason)
        self._relay.shutdown.legs_changed()

    def cut_all(self) -> None:
        """Cut every leg still in flight (the stop's last stage), oldest first."""
        for leg in self.in_flight():
            if leg.cut is not None:
                leg.cut()
            self.close(leg, "drained")
