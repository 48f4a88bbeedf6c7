"""Parcels, and the Returned notice a parcel gets back when it could not be delivered."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

# Kinds of parcel: "user", "lifecycle", "system", "ignorable", "failure" (a Returned notice).
NO_RETURN_KINDS = frozenset({"failure", "ignorable", "lifecycle"})


@dataclass
class Parcel:
    id: str
    sender: str
    target: str
    type: str
    kind: str = "user"
    key: str | None = None
    identity: str | None = "user"
    packaged: bool = False
    sub: str | None = None
    error: str | None = None   # a Returned notice: why
    answers: str | None = None  # a Returned notice: which parcel

    def to_wire(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> Parcel:
        return cls(**data)


@dataclass
class Returned:
    """The failure notice: parcel `answers` could not be delivered, because `error`."""
    parcel: Parcel
    error: str


def may_return(parcel: Parcel) -> bool:
    """Whether a parcel that could not be delivered is owed a Returned notice."""
    return parcel.kind not in NO_RETURN_KINDS
