"""The in-process router: routed frames are packaged and carried to their node as counted legs.

A dispatch is accepted at once (its leg starts) and the frame leaves on the loop's
next turn, over the node's link.
A frame whose node is missing, or gone by the time it lands, fails its leg and is
answered NotFound (when it may be answered) by a nack leg started before the failed
leg ends, so the count of legs in flight never touches zero in between. Once the
stop has begun, dispatches are refused and answered ShuttingDown at once.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from relaycore.frames import Frame, diagnostic_key, package, through_the_wire
from relaycore.legs import Leg

if TYPE_CHECKING:
    from relaycore.relay import Relay

HUB = "switchboard"


class Switchboard:
    def __init__(self, relay: Relay) -> None:
        self._relay = relay
        self.closed = False  # the receiving end of every node's uplink
        self.closing = False  # the stop has begun: refuse new dispatches
        self.roundtrip = False  # send every packaged frame through the wire format

    def data_received(self, frame: Frame) -> None:
        if frame["kind"] == "reply":
            self._relay.calls.settle(frame)
        else:
            self.dispatch(frame)

    def prepare(self, frame: Frame) -> Frame:
        packaged = package(frame)
        return through_the_wire(packaged) if self.roundtrip else packaged

    def dispatch(self, frame: Frame) -> None:
        frame = self.prepare(frame)
        if self.closing:
            self.refuse(frame, where=HUB)
            return
        leg = self._relay.gauge.open("route", frame, HUB)
        if "b05" in self._relay.bugs:
            # Straight onto the loop: the leg can be cut once the frame is on its link.
            self._relay.loop.call_soon(self._carry, frame, leg)
            return
        self._send(frame, leg)

    def refuse(self, frame: Frame, *, where: str) -> None:
        self._relay.tel("dispatch_refused", hub=where, delivery_id=frame["id"],
                        sender=frame["src"], target=frame["dst"], message_type=frame["type"],
                        message_class=frame["cls"], diagnostic_key=diagnostic_key(frame),
                        packaged=frame["wire"], error="ShuttingDown")
        self._relay.answers.answer(frame, "ShuttingDown", where=where, local=True)

    def carry_nack(self, nack: Frame) -> None:
        nack = self.prepare(nack)
        self._send(nack, self._relay.gauge.open("nack", nack, HUB))

    def _send(self, frame: Frame, leg: Leg) -> None:
        # Accepted now; like a transport's write buffer, it leaves on the loop's next turn.
        handle = self._relay.loop.call_soon(self._carry, frame, leg)
        leg.cut = handle.cancel

    def _carry(self, frame: Frame, leg: Leg) -> None:
        link = self._relay.downlink(frame["dst"])
        if link is None:
            self._undeliverable(frame, leg)
            return
        handle = link.write(frame, landed=partial(self._relay.gauge.close, leg, "completed"),
                            lost=partial(self._undeliverable, frame, leg))
        leg.cut = handle.cancel

    def _undeliverable(self, frame: Frame, leg: Leg) -> None:
        self._relay.answers.answer(frame, "NotFound", where=HUB, local=False)
        self._relay.gauge.close(leg, "failed")
