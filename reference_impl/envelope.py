"""The delivery envelope: id, sender, target, identity, properties and payload.

`package()` erases the payload's type (it becomes `RawJson`) and, just before, stamps the
two facts downstream code still needs on the envelope: the answer-suppressed marker (its
presence alone counts, so it survives any JSON round trip) and the diagnostic key.
"""

from __future__ import annotations

import json
from typing import Any

from invariants.trace import MessageClass
from reference_impl.messages import Message, Payload, RawJson, message_from_json

ANSWER_SUPPRESSED = "answerSuppressed"
DIAGNOSTIC_KEY = "diagnosticKey"
_new = object.__new__


class Delivery:
    """One message on its way from `sender` to `target`. `identity` None = no access context."""

    __slots__ = (
        "diagnostic_key", "id", "identity", "message", "message_class", "message_type",
        "packaged", "properties", "sender", "subscription_id", "target",
    )

    def __init__(
        self,
        id: str,
        sender: str,
        target: str,
        message: Payload,
        identity: str | None = "user",
        properties: dict[str, Any] | None = None,
        subscription_id: str | None = None,
    ) -> None:
        # Every argument may be passed by position: building a class instance with keyword
        # arguments is markedly slower, and a delivery is built for every post and every
        # packaging.
        self.id = id
        self.sender = sender
        self.target = target
        self.message = message
        self.identity = identity
        self.subscription_id = subscription_id
        # Read on every intake: copied from the payload's header once (a delivery's payload
        # is never replaced; packaging makes a new delivery).
        self.message_type: str = message.type_name
        self.message_class: MessageClass = message.message_class
        self.packaged = isinstance(message, RawJson)
        # The payload identity: from the envelope once packaged, else from the payload.
        self.diagnostic_key: str | None
        if not properties:  # a fresh post's envelope: nothing stamped on it
            self.properties: dict[str, Any] = {} if properties is None else properties
            self.diagnostic_key = message.diagnostic_key
            return
        self.properties = properties
        stamped = properties.get(DIAGNOSTIC_KEY)
        self.diagnostic_key = str(stamped) if stamped is not None else message.diagnostic_key

    def may_answer(self) -> bool:
        """False when the envelope carries the marker; otherwise the payload's own policy
        (so an unpackaged delivery still behaves)."""
        if ANSWER_SUPPRESSED in self.properties:
            return False
        return not self.message.suppresses_answer()

    def package(self) -> Delivery:
        """The same delivery with its payload serialised to RawJson (idempotent)."""
        message = self.message
        if isinstance(message, RawJson):
            return self
        properties = dict(self.properties)
        if message.suppresses_answer():
            properties[ANSWER_SUPPRESSED] = True
        if message.diagnostic_key is not None:
            properties[DIAGNOSTIC_KEY] = message.diagnostic_key
        return Delivery(
            self.id, self.sender, self.target, RawJson.of(message), self.identity, properties,
            self.subscription_id,
        )

    def unpacked_message(self) -> Message:
        message = self.message
        return message.unpack() if isinstance(message, RawJson) else message

    def to_json(self) -> dict[str, Any]:
        message = self.message
        payload: dict[str, Any]
        if isinstance(message, RawJson):
            payload = {"raw": message.text}
        else:
            payload = {"message": message.to_json()}
        return {
            "id": self.id, "sender": self.sender, "target": self.target,
            "identity": self.identity, "properties": dict(self.properties),
            "subscriptionId": self.subscription_id, **payload,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Delivery:
        try:
            if "raw" in data:
                text = str(data["raw"])
                header = message_from_json(_json_loads(text))
                message: Payload = RawJson(text, header.type_name, header.message_class)
            else:
                message = message_from_json(data["message"])
            return cls(
                str(data["id"]), str(data["sender"]), str(data["target"]), message,
                identity=data.get("identity"), properties=dict(data.get("properties") or {}),
                subscription_id=data.get("subscriptionId"),
            )
        except KeyError as exc:
            raise ValueError(f"delivery JSON lacks key {exc}") from exc


def fresh_delivery(id: str, sender: str, target: str, message: Payload,
                   identity: str | None) -> Delivery:
    """`Delivery(id, sender, target, message, identity)`: a new post's envelope, nothing
    stamped on it. Each slot is stored directly, as `Delivery.__init__` stores it: calling a
    class that has an `__init__` is one of the costliest steps of a post (a test pins the
    two alike)."""
    d: Delivery = _new(Delivery)
    d.id = id
    d.sender = sender
    d.target = target
    d.message = message
    d.identity = identity
    d.subscription_id = None
    d.message_type = message.type_name
    d.message_class = message.message_class
    d.packaged = isinstance(message, RawJson)
    d.properties = {}
    d.diagnostic_key = message.diagnostic_key
    return d


def _json_loads(text: str) -> dict[str, Any]:
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError("RawJson body is not a JSON object")
    return value

