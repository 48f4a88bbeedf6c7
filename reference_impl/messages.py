"""Payloads: user-facing, lifecycle, system and can-be-ignored messages, DeliveryFailure, RawJson.

A payload's answer policy is a property of its own type; once a delivery is packaged its
payload is `RawJson`, which knows nothing of that policy (the envelope carries it instead).
"""

from __future__ import annotations

import json
from enum import StrEnum
from json.encoder import encode_basestring_ascii
from typing import Any

from invariants.trace import MessageClass

try:
    from _json import make_encoder
except ImportError:  # a Python without the C accelerator: the pure-Python encoder
    make_encoder = None  # type: ignore[assignment, misc]

_new = object.__new__


class ErrorType(StrEnum):
    NOT_FOUND = "NotFound"
    FAILED = "Failed"
    SHUTTING_DOWN = "ShuttingDown"
    UNAVAILABLE = "Unavailable"
    REJECTED = "Rejected"
    IGNORED = "Ignored"


# Well-known type names.
HEARTBEAT = "Heartbeat"
SUBSCRIBE_REQUEST = "SubscribeRequest"
SUBSCRIBE_RESPONSE = "SubscribeResponse"
DELIVERY_FAILURE = "DeliveryFailure"


class Message:
    """A typed payload. `reply_to` is the id of the request a response answers."""

    __slots__ = ("diagnostic_key", "message_class", "reply_to", "type_name")

    def __init__(
        self,
        type_name: str,
        message_class: MessageClass = MessageClass.USER,
        diagnostic_key: str | None = None,
        reply_to: str | None = None,
    ) -> None:
        self.type_name = type_name
        self.message_class = message_class
        self.diagnostic_key = diagnostic_key
        self.reply_to = reply_to

    def suppresses_answer(self) -> bool:
        """The payload's own answer policy: a failure to route it is never answered."""
        return self.message_class.suppresses_answer

    def to_json(self) -> dict[str, Any]:
        # `_value_`, not `.value`: the enum property is a slow descriptor call.
        data: dict[str, Any] = {"$type": self.type_name, "$class": self.message_class._value_}
        if self.diagnostic_key is not None:
            data["diagnosticKey"] = self.diagnostic_key
        if self.reply_to is not None:
            data["replyTo"] = self.reply_to
        return data


def new_message(type_name: str, message_class: MessageClass,
                diagnostic_key: str | None) -> Message:
    """`Message(type_name, message_class, diagnostic_key)` with each slot stored directly:
    cheaper than calling the class (every post builds one; a test pins the two alike)."""
    message: Message = _new(Message)
    message.type_name = type_name
    message.message_class = message_class
    message.diagnostic_key = diagnostic_key
    message.reply_to = None
    return message


class DeliveryFailure(Message):
    """Answers delivery `answers` with an error type."""

    __slots__ = ("answers", "error")

    def __init__(self, answers: str, error: ErrorType) -> None:
        super().__init__(DELIVERY_FAILURE, MessageClass.FAILURE)
        self.answers = answers
        self.error = error

    @classmethod
    def as_payload(cls, answers: str, error: ErrorType) -> DeliveryFailure:
        """A failure this mesh did not emit (deserialised, or a driver's payload).

        Answers are emitted only at the guarded sites (`Router.answer_failure`,
        `Hub.report_failure`); every other construction goes through here, so an emit
        site is always a direct `DeliveryFailure(...)` call.
        """
        return cls(answers, error)

    def suppresses_answer(self) -> bool:
        return True  # a failure is never answered by another failure

    def to_json(self) -> dict[str, Any]:
        data = super().to_json()
        data["answers"] = self.answers
        data["error"] = self.error._value_
        return data


# What `json.dumps(..., sort_keys=True)` builds on every call, built once (it keeps no state
# between calls): packaging runs for every routed delivery.
_ENCODER = json.JSONEncoder(sort_keys=True)
# `_ENCODER.encode` still makes a C encoder, and a dict to detect cycles, on every call.
# The C encoder with the same settings, made once and without the cycle check (a payload
# is a flat dict of strings, never a cycle), writes the same text for about half the work.
_encode_chunks: make_encoder | None = (
    make_encoder(None, _ENCODER.default, encode_basestring_ascii, None,
                 _ENCODER.key_separator, _ENCODER.item_separator, True, False, True)
    if make_encoder is not None else None
)


def encode_payload(data: dict[str, Any]) -> str:
    """`json.dumps(data, sort_keys=True)`, byte for byte."""
    if _encode_chunks is None:
        return _ENCODER.encode(data)
    return "".join(_encode_chunks(data, 0))


class RawJson:
    """A serialised payload. The `$type`/`$class` header is readable without parsing the body
    (the hub needs it for shedding and tracing); the answer policy is not: it is not a type."""

    __slots__ = ("message_class", "text", "type_name")

    def __init__(self, text: str, type_name: str, message_class: MessageClass) -> None:
        self.text = text
        self.type_name = type_name
        self.message_class = message_class

    @classmethod
    def of(cls, message: Message) -> RawJson:
        return cls(encode_payload(message.to_json()), message.type_name, message.message_class)

    @property
    def diagnostic_key(self) -> str | None:
        return None  # the identity travels on the envelope once the type is erased

    def suppresses_answer(self) -> bool:
        return False  # RawJson is neither a DeliveryFailure nor can-be-ignored

    def unpack(self) -> Message:
        """Deserialise the payload (done by the receiving hub's handler)."""
        return message_from_json(json.loads(self.text))


Payload = Message | RawJson


def message_from_json(data: dict[str, Any]) -> Message:
    try:
        type_name = str(data["$type"])
        message_class = MessageClass(data["$class"])
    except (KeyError, ValueError) as exc:
        raise ValueError(f"payload JSON lacks a valid $type/$class header: {exc}") from exc
    if type_name == DELIVERY_FAILURE:
        return DeliveryFailure.as_payload(str(data["answers"]), ErrorType(data["error"]))
    return Message(type_name, message_class, data.get("diagnosticKey"), data.get("replyTo"))
