"""Several nodes on one roster, started and stopped together (the demo's and tests' mesh)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from .hooks import Hooks
from .node import Node, make_node
from .observer import Observer
from .settings import Roster, Settings


class Cluster:
    def __init__(self, names: Iterable[str], *, host: str = "127.0.0.1",
                 settings: Settings | None = None, observer: Observer | None = None,
                 hooks: Hooks | None = None) -> None:
        self.roster = Roster.local(names, host)
        self.settings = settings or Settings()
        self.observer = observer or Observer()
        self.hooks = hooks or Hooks()
        self.nodes: dict[str, Node] = {name: self._make(name) for name in self.roster.names()}

    def __getitem__(self, name: str) -> Node:
        return self.nodes[name]

    def _make(self, name: str) -> Node:
        return make_node(name, self.roster, settings=self.settings, observer=self.observer,
                         hooks=self.hooks)

    async def start(self) -> None:
        for node in self.nodes.values():
            await node.start()

    async def rebuild(self, name: str) -> Node:
        """A fresh node in place of `name` (after a crash), started on the same port."""
        self.nodes[name] = self._make(name)
        await self.nodes[name].start()
        return self.nodes[name]

    async def stop(self, graceful: bool = True) -> None:
        await asyncio.gather(*(node.stop(graceful) for node in self.nodes.values()))
