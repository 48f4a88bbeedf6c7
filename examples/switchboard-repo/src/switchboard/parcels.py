"""Parcels (envelopes), their bodies, sealing for the relay, and the reply policy.

A routed parcel is *sealed*: its body becomes JSON text (`Sealed`) and the envelope keeps
what the intake and the reply policy need as string headers, stamped before the body's
type is erased. `Parcel.answerable()` reads the no-reply header first (only its presence,
so it survives the wire format) and falls back to the body only for an unsealed parcel.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Klass(StrEnum):
    """What kind of traffic a body is; decides reply, breaker and shedding policy."""

    REQUEST = "request"   # user-facing work
    CONTROL = "control"   # lifecycle: start, shutdown, dispose
    SYSTEM = "system"     # the switchboard's own; exempt from the badge check only
    CHATTER = "chatter"   # can be ignored: heartbeats, gossip
    BOUNCE = "bounce"     # an Undeliverable notice


NEVER_ANSWERED = frozenset({Klass.CONTROL, Klass.CHATTER, Klass.BOUNCE})
NOT_COUNTED = frozenset({Klass.CONTROL, Klass.CHATTER, Klass.BOUNCE})  # by the storm breaker
SHEDDABLE = frozenset({Klass.CHATTER})

# Envelope headers.
H_KIND = "x-kind"
H_CLASS = "x-class"
H_TOPIC = "x-topic"
H_NO_REPLY = "x-no-reply"  # present: this parcel must never be answered


@dataclass(frozen=True, slots=True)
class Note:
    """An ordinary body: a named message, its traffic class, its topic (payload identity)."""

    kind: str
    klass: Klass = Klass.REQUEST
    topic: str | None = None
    ref: str | None = None  # the parcel this one refers to (a subscribe acknowledgement)

    @property
    def quiet(self) -> bool:
        return self.klass in NEVER_ANSWERED


@dataclass(frozen=True, slots=True)
class Undeliverable:
    """The notice that a parcel could not be delivered; never itself answered."""

    answers: str
    error: str
    kind: str = "Undeliverable"
    klass: Klass = Klass.BOUNCE
    topic: str | None = None
    quiet: bool = True

    @classmethod
    def revive(cls, answers: str, error: str, kind: str = "Undeliverable",
               topic: str | None = None) -> Undeliverable:
        """A notice decoded from the wire or handed in from outside: it answers nothing here."""
        return cls(answers, error, kind, Klass.BOUNCE, topic)


@dataclass(frozen=True, slots=True)
class Sealed:
    """A body erased to JSON text for the relay; only the envelope says what it was."""

    text: str
    quiet: bool = False  # the type is gone: only the H_NO_REPLY header can tell


Body = Note | Undeliverable | Sealed


@dataclass(slots=True)
class Parcel:
    id: str
    sender: str
    target: str
    badge: str | None  # the caller's identity; None is an anonymous post
    body: Body
    headers: dict[str, str] = field(default_factory=dict)
    subscription: str | None = None

    @property
    def sealed(self) -> bool:
        return isinstance(self.body, Sealed)

    @property
    def kind(self) -> str:
        return self.headers[H_KIND] if self.sealed else _open(self.body).kind

    @property
    def klass(self) -> Klass:
        return Klass(self.headers[H_CLASS]) if self.sealed else _open(self.body).klass

    @property
    def topic(self) -> str | None:
        return self.headers.get(H_TOPIC) if self.sealed else _open(self.body).topic

    def answerable(self) -> bool:
        """Whether a failure to deliver this parcel may be answered with an Undeliverable."""
        if H_NO_REPLY in self.headers:
            return False
        return not self.body.quiet


def _open(body: Body) -> Note | Undeliverable:
    if isinstance(body, Sealed):
        return open_body(body)
    return body


def seal(parcel: Parcel) -> Parcel:
    """The parcel as the relay carries it: body as JSON, headers stamped first."""
    if parcel.sealed:
        return parcel
    body = _open(parcel.body)
    headers = dict(parcel.headers)
    headers[H_KIND] = body.kind
    headers[H_CLASS] = body.klass.value
    if body.topic is not None:
        headers[H_TOPIC] = body.topic
    if body.quiet:
        headers[H_NO_REPLY] = "1"
    return Parcel(parcel.id, parcel.sender, parcel.target, parcel.badge,
                  Sealed(_encode(body)), headers, parcel.subscription)


def open_body(sealed: Sealed) -> Note | Undeliverable:
    data = json.loads(sealed.text)
    if data["t"] == "undeliverable":
        return Undeliverable.revive(data["answers"], data["error"], data["kind"], data["topic"])
    return Note(data["kind"], Klass(data["klass"]), data["topic"], data["ref"])


def opened(parcel: Parcel) -> Note | Undeliverable:
    """The parcel's body as a handler reads it."""
    return _open(parcel.body)


def _encode(body: Note | Undeliverable) -> str:
    if isinstance(body, Note):
        return json.dumps({"t": "note", "kind": body.kind, "klass": body.klass.value,
                           "topic": body.topic, "ref": body.ref})
    return json.dumps({"t": "undeliverable", "answers": body.answers, "error": body.error,
                       "kind": body.kind, "topic": body.topic})


def to_wire(parcel: Parcel) -> str:
    """A sealed parcel in the wire format (headers are strings, so they survive as sent)."""
    assert isinstance(parcel.body, Sealed), "only sealed parcels travel"
    doc: dict[str, Any] = {"id": parcel.id, "sender": parcel.sender, "target": parcel.target,
                           "badge": parcel.badge, "body": parcel.body.text,
                           "headers": parcel.headers, "subscription": parcel.subscription}
    return json.dumps(doc)


def from_wire(text: str) -> Parcel:
    doc = json.loads(text)
    return Parcel(doc["id"], doc["sender"], doc["target"], doc["badge"], Sealed(doc["body"]),
                  dict(doc["headers"]), doc["subscription"])
