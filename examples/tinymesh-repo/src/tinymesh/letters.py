"""Letters (the envelope), their bodies, packaging, and the reply guard `can_reply()`."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from enum import StrEnum


class Kind(StrEnum):
    REQUEST = "request"  # what users send: always served, never spilled
    CONTROL = "control"  # start/stop/dispose: never spilled, never counted, never answered
    SYSTEM = "system"  # the mesh's own traffic: needs no caller identity
    CHATTER = "chatter"  # may be ignored (heartbeats): the only kind a full mailbox spills
    BOUNCE = "bounce"  # a Bounce notice


# Kinds that are never answered with a Bounce: answering them is how storms start.
QUIET = frozenset({Kind.CONTROL, Kind.CHATTER, Kind.BOUNCE})
# The marker packaging stamps on a quiet letter; only its presence is ever read.
QUIET_MARK = "quiet"


@dataclass(frozen=True, slots=True)
class Plain:
    subject: str
    kind: Kind
    topic: str | None = None  # what the letter is about (a node path, a stream id)


@dataclass(frozen=True, slots=True)
class Bounce:
    """The notice that letter `answers` could not be delivered, and why."""

    answers: str
    reason: str  # NoSuchHub | Closing | Lost
    subject: str = "Bounce"
    kind: Kind = Kind.BOUNCE
    topic: str | None = None


@dataclass(frozen=True, slots=True)
class Blob:
    """A packaged body: its JSON text. Couriers only ever carry blobs."""

    text: str


Body = Plain | Bounce | Blob


@dataclass(frozen=True, slots=True)
class Letter:
    id: str
    sender: str
    target: str
    caller: str | None  # the access identity; None: nobody vouched for it
    body: Body
    marks: dict[str, str] = field(default_factory=dict)
    watch: str | None = None  # the watch this letter is a try of

    def can_reply(self) -> bool:
        """Whether a failure to deliver this letter may be answered with a Bounce.

        The mark first: after packaging the body is a Blob and says nothing of its kind.
        """
        if QUIET_MARK in self.marks:
            return False
        body = self.body
        return isinstance(body, Blob) or body.kind not in QUIET

    @property
    def packaged(self) -> bool:
        return isinstance(self.body, Blob)


def package(letter: Letter) -> Letter:
    """The letter as a courier carries it: the body as JSON, its reply policy as a mark."""
    body = letter.body
    if isinstance(body, Blob):
        return letter
    marks = dict(letter.marks)
    if body.kind in QUIET:
        marks[QUIET_MARK] = "1"
    if body.topic is not None:
        marks["topic"] = body.topic
    fields = {"bounce": isinstance(body, Bounce), **_fields(body)}
    return replace(letter, body=Blob(json.dumps(fields, sort_keys=True)), marks=marks)


def unpack(letter: Letter) -> Letter:
    body = letter.body
    if not isinstance(body, Blob):
        return letter
    data = json.loads(body.text)
    kind = Kind(data["kind"])
    opened: Plain | Bounce
    if data.pop("bounce"):
        # Decoding a notice already sent, not answering anything.
        opened = Bounce(data["answers"], data["reason"])  # harness: allow[MESH001] decoded
    else:
        opened = Plain(data["subject"], kind, data.get("topic"))
    return replace(letter, body=opened)


def _fields(body: Plain | Bounce) -> dict[str, object]:
    if isinstance(body, Bounce):
        return {"answers": body.answers, "reason": body.reason, "kind": body.kind.value}
    return {"subject": body.subject, "kind": body.kind.value, "topic": body.topic}
