"""Seams where a test rig can bend a node (slow it, refuse a call, lose a reply, hold a
hub's turn). Every one is a no-op here; a node takes a subclass of `Hooks` to change them.
"""

from __future__ import annotations

from .envelope import Envelope


class Hooks:
    async def before_send(self, node: str, env: Envelope, attempt: int) -> None:
        """Runs before each attempt leaves the caller (a slow destination waits here)."""

    async def before_take(self, node: str, env: Envelope, attempt: int) -> str | None:
        """At the callee, before it takes an attempt: an error name refuses it."""
        return None

    def lose_reply(self, node: str, env: Envelope, attempt: int) -> bool:
        """At the callee, once it took an attempt: True drops the reply (the caller times
        out while the callee still runs the delivery)."""
        return False

    async def before_turn(self, hub: str) -> None:
        """Runs before each turn of a hub (a held turn waits here)."""
