"""Frames (small dicts), their payloads, packaging for the wire and the reply policy.

A frame is the envelope: id, source, destination, type name, traffic class,
identity, properties and a body. In-process the body is a payload object; once
a frame is packaged for a router the body is JSON text, and the only facts the
relay may still read are the envelope's: so packaging stamps them first.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

Frame = dict[str, Any]

# Traffic classes. Silent ones are never answered; counted ones feed the breaker.
SILENT_CLASSES = frozenset({"ignorable", "lifecycle", "failure"})
COUNTED_CLASSES = frozenset({"user", "system"})
RELAY_IDENTITY = "relay"  # the identity the relay's own frames carry

# Envelope properties stamped by package().
MUTE = "mute"  # present only when the payload must never be answered
TOPIC = "topic"  # the payload's identity (a stream id, a node path)


@dataclass(frozen=True)
class Note:
    """An ordinary payload: its class, identity, and the request it answers, if any."""

    cls: str = "user"
    key: str | None = None
    raises: bool = False
    answers: str | None = None

    @property
    def silent(self) -> bool:
        return self.cls in SILENT_CLASSES

    def encode(self) -> dict[str, Any]:
        return {"$": "note", "cls": self.cls, "key": self.key, "raises": self.raises,
                "answers": self.answers}


@dataclass(frozen=True)
class Undeliverable:
    """The failure notice: the frame `answers` could not be delivered, and why."""

    answers: str
    error: str
    key: str | None = None
    silent: ClassVar[bool] = True

    def encode(self) -> dict[str, Any]:
        return {"$": "undeliverable", "answers": self.answers, "error": self.error,
                "key": self.key}


Payload = Note | Undeliverable
Path = Literal["direct", "routed", "call"]


def make_frame(fid: str, src: str, dst: str, type_name: str, cls: str, body: Payload,
               identity: str | None, *, sub: str | None = None) -> Frame:
    """A fresh, unpackaged frame."""
    return {"kind": "msg", "id": fid, "src": src, "dst": dst, "type": type_name, "cls": cls,
            "ident": identity, "body": body, "props": {}, "wire": False, "sub": sub}


def package(frame: Frame) -> Frame:
    """The frame with its body serialised, the reply policy and identity stamped first."""
    if frame["wire"]:
        return frame
    body: Payload = frame["body"]
    props = dict(frame["props"])
    if body.silent:
        props[MUTE] = True
    if body.key is not None:
        props[TOPIC] = body.key
    return {**frame, "body": json.dumps(body.encode(), sort_keys=True), "props": props,
            "wire": True}


def may_reply(frame: Frame) -> bool:
    """Whether a failure may be answered: the envelope's stamp, else the payload's own word."""
    if MUTE in frame["props"]:
        return False
    body = frame["body"]
    if isinstance(body, str):  # packaged without the stamp: an ordinary payload
        return True
    return not body.silent


def diagnostic_key(frame: Frame) -> str | None:
    """The payload's identity, read from the envelope once the frame is packaged."""
    if frame["wire"]:
        topic = frame["props"].get(TOPIC)
        return topic if isinstance(topic, str) else None
    body: Payload = frame["body"]
    return body.key


def open_body(frame: Frame) -> dict[str, Any]:
    """The payload's fields, packaged or not."""
    body = frame["body"]
    if isinstance(body, str):
        fields = json.loads(body)
        return fields if isinstance(fields, dict) else {}
    payload: Payload = body
    return payload.encode()


def through_the_wire(frame: Frame) -> Frame:
    """The frame after a trip through the wire format and back."""
    decoded: Frame = json.loads(json.dumps(frame, sort_keys=True))
    return decoded
