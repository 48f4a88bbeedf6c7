"""What travels: an envelope, its traffic class, and the failure answer.

Whether a delivery may be answered is read off the envelope's traffic class, which
crosses the wire with it: never off the body, which a hop turns into plain JSON.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class Traffic(StrEnum):
    USER = "user"
    SYSTEM = "system"
    LIFECYCLE = "lifecycle"
    HEARTBEAT = "heartbeat"  # ignorable: nobody waits for it, nobody is told it was lost
    FAILURE = "failure"      # a DeliveryFailure


# Traffic that is never answered: answering a failure or a heartbeat is how one lost
# message becomes a storm.
UNANSWERED = frozenset({Traffic.FAILURE, Traffic.HEARTBEAT, Traffic.LIFECYCLE})
# Traffic that needs no identity to be let in: system messages only. The mesh vouches for
# the failure answers it builds itself (DeliveryFailure.envelope).
EXEMPT_FROM_IDENTITY = frozenset({Traffic.SYSTEM})


def split_address(address: str) -> tuple[str, str]:
    """'node/hub' -> ('node', 'hub'); ValueError for anything else."""
    node, sep, hub = address.partition("/")
    if not sep or not node or not hub or "/" in hub:
        raise ValueError(f"not a 'node/hub' address: {address!r}")
    return node, hub


@dataclass(frozen=True)
class Envelope:
    id: str
    sender: str
    target: str
    kind: str                     # the payload's type name
    traffic: Traffic = Traffic.USER
    body: Any = None              # JSON
    key: str | None = None        # the payload's identity (a stream id, a path)
    identity: str | None = None   # who vouches for it; None: nobody

    def to_wire(self) -> dict[str, Any]:
        return {"id": self.id, "sender": self.sender, "target": self.target,
                "kind": self.kind, "traffic": self.traffic.value, "body": self.body,
                "key": self.key, "identity": self.identity}

    @classmethod
    def from_wire(cls, data: Any) -> Envelope:
        if not isinstance(data, dict):
            raise ValueError("envelope: not an object")
        strings = ("id", "sender", "target", "kind")
        if not all(isinstance(data.get(name), str) for name in strings):
            raise ValueError(f"envelope: {', '.join(strings)} must be strings")
        for name in ("key", "identity"):
            if data.get(name) is not None and not isinstance(data[name], str):
                raise ValueError(f"envelope: {name} must be a string or null")
        return cls(id=data["id"], sender=data["sender"], target=data["target"],
                   kind=data["kind"], traffic=Traffic(data.get("traffic", "user")),
                   body=data.get("body"), key=data.get("key"),
                   identity=data.get("identity"))


def may_answer(envelope: Envelope) -> bool:
    """Whether the sender of `envelope` may be told it could not be delivered."""
    return envelope.traffic not in UNANSWERED


@dataclass(frozen=True)
class DeliveryFailure:
    """The body of a failure answer: which delivery failed, and why."""

    answers: str
    error: str

    KIND = "DeliveryFailure"

    def envelope(self, answer_id: str, failed: Envelope, vouched_by: str | None = None
                 ) -> Envelope:
        """The answer to `failed`, from its target back to its sender; `vouched_by` is its
        identity (the node that built it)."""
        return Envelope(id=answer_id, sender=failed.target, target=failed.sender,
                        kind=self.KIND, traffic=Traffic.FAILURE,
                        body={"answers": self.answers, "error": self.error},
                        identity=vouched_by)

    @classmethod
    def read(cls, envelope: Envelope) -> DeliveryFailure:
        body = envelope.body
        if envelope.traffic is not Traffic.FAILURE or not isinstance(body, dict):
            raise ValueError(f"{envelope.id} is not a DeliveryFailure")
        return cls(answers=str(body["answers"]), error=str(body["error"]))
