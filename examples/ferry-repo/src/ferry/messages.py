"""Deliveries, the failure notice and the one answer guard."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

USER, SYSTEM, IGNORABLE, LIFECYCLE, FAILURE = "user", "system", "ignorable", "lifecycle", "failure"
ANSWERABLE = (USER, SYSTEM)


@dataclass
class Delivery:
    id: str
    sender: str
    target: str
    type: str
    cls: str = USER
    key: str | None = None
    identity: str | None = "user"
    route: str = "monolith"
    packaged: bool = False
    subscription: str | None = None
    answers: str | None = None

    def to_wire(self) -> dict[str, Any]:
        return {"id": self.id, "sender": self.sender, "target": self.target, "type": self.type,
                "cls": self.cls, "key": self.key, "identity": self.identity,
                "route": self.route, "sub": self.subscription, "answers": self.answers}

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> Delivery:
        return cls(id=data["id"], sender=data["sender"], target=data["target"], type=data["type"],
                   cls=data["cls"], key=data.get("key"), identity=data.get("identity"),
                   route=data.get("route", "monolith"), packaged=True,
                   subscription=data.get("sub"), answers=data.get("answers"))


def may_answer(delivery: Delivery) -> bool:
    """Only ordinary traffic is ever answered; the envelope's class says so, not the payload."""
    return delivery.cls in ANSWERABLE


def FailureNotice(delivery: Delivery, error: str, notice_id: str) -> Delivery:
    """The failure answer to `delivery`, travelling back to its sender."""
    return Delivery(id=notice_id, sender=delivery.target, target=delivery.sender,
                    type="FailureNotice", cls=FAILURE, identity="mesh",
                    route="nack", answers=delivery.id)
