"""Letters (what hubs carry), their wire form, and the failure notice: the `ReturnSlip`."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

# Kinds of letter: the envelope says which, whatever the body is.
USER = "user"
LIFECYCLE = "lifecycle"
SYSTEM = "system"
IGNORABLE = "ignorable"
FAILURE = "failure"

ANSWERABLE = frozenset({USER, SYSTEM})


@dataclass(frozen=True)
class Letter:
    id: str
    sender: str
    target: str
    body: str                 # the payload's type name
    kind: str = USER          # the envelope's class
    topic: str | None = None  # the payload's identity (part of the breaker key)
    identity: str | None = "user"
    route: str = "monolith"
    packaged: bool = False
    sub_id: str | None = None
    answers: str | None = None
    error: str | None = None

    def to_wire(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_wire(data: dict[str, Any]) -> Letter:
        return Letter(**data)

    def packed(self) -> Letter:
        return replace(self, packaged=True)


def warrants_reply(letter: Letter) -> bool:
    """Whether a failure of `letter` is answered: only user and system letters are; a
    heartbeat, a lifecycle letter or a failure notice never is (read off the envelope)."""
    return letter.kind in ANSWERABLE


def ReturnSlip(letter: Letter, error: str, slip_id: str) -> Letter:
    """The failure notice answering `letter`: back to its sender, from its target."""
    return Letter(id=slip_id, sender=letter.target, target=letter.sender, body="ReturnSlip",
                  kind=FAILURE, identity="system", route=letter.route,
                  packaged=letter.packaged, answers=letter.id, error=error)
