"""The mesh's figures, and where each node listens."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntEnum


class Stage(IntEnum):
    """The stages of a node's stop, entered in descending order."""

    QUIESCE = 30     # refuse new work; hold while this node's legs are in flight
    DETACH = 20      # cut the legs still in flight, close the hubs
    DISCONNECT = 10  # close the links, the inbound connections and the server


@dataclass(frozen=True)
class Settings:
    """Every figure a node works to, in milliseconds where it is a time."""

    response_timeout_ms: int = 2000  # a caller gives up on a reply after this
    retries: int = 3                 # re-sends of a refused call (so at most 4 attempts)
    backoff_base_ms: int = 50        # the wait before re-send n is min(base * 2**n, cap)
    backoff_cap_ms: int = 400
    connect_timeout_ms: int = 1000   # dialling a peer
    stop_budget_ms: int = 5000       # how long a graceful stop holds for legs in flight
    watermark: int = 1000            # a hub sheds heartbeats and failures at this depth
    capacity: int = 10_000           # a hub refuses calls ("Rejected") at this depth
    max_frame_bytes: int = 1 << 20
    # Named faults a test rig switches on (see PLANTED.json); none by default.
    bugs: frozenset[str] = frozenset()

    def backoff_s(self, retry: int) -> float:
        """The wait before re-send `retry` (0-based), in seconds."""
        return min(self.backoff_base_ms << retry, self.backoff_cap_ms) / 1000


class Roster:
    """Where each node listens: its name, host and port (0 until the node has bound one)."""

    def __init__(self) -> None:
        self._where: dict[str, tuple[str, int]] = {}
        self._built: dict[str, int] = {}

    @classmethod
    def local(cls, names: Iterable[str], host: str = "127.0.0.1") -> Roster:
        """Nodes on one host, each on an ephemeral port."""
        roster = cls()
        for name in names:
            roster.add(name, host, 0)
        return roster

    def add(self, name: str, host: str, port: int = 0) -> None:
        if "/" in name or not name:
            raise ValueError(f"roster: a node name is non-empty and has no '/', got {name!r}")
        self._where[name] = (host, port)

    def knows(self, name: str) -> bool:
        return name in self._where

    def address(self, name: str) -> tuple[str, int]:
        return self._where[name]

    def bound(self, name: str, port: int) -> None:
        """The node bound `port`; a rebuilt node binds the same one again."""
        host, _ = self._where[name]
        self._where[name] = (host, port)

    def incarnation(self, name: str) -> int:
        """A node named `name` is being built: which one it is, from 1 (a rebuilt node is
        the next), so what it numbers is told apart from what its predecessors did."""
        self._built[name] = self._built.get(name, 0) + 1
        return self._built[name]

    def names(self) -> list[str]:
        return sorted(self._where)
