"""Planted static bug `relay-awaits-next-hop` (AIO001), not part of the mesh.

The scan reads `src/` only: a test copies this file into `src/aiomesh/relay.py` of a copy
of the repository, and the scan must then fail with AIO001 on the `await` below.

A relay hub forwards what its turn takes to the next hop by a call, and waits for the
answer before it takes the next message: everything queued behind it waits too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiomesh.envelope import Envelope
from aiomesh.hub import Hub

if TYPE_CHECKING:
    from aiomesh.mesh import Mesh


class RelayHub(Hub):
    def __init__(self, mesh: Mesh, address: str, next_hop: str) -> None:
        self.next_hop = next_hop  # before the pump starts (in Hub.__init__)
        super().__init__(mesh, address)

    async def _pump(self) -> None:
        while True:
            env = self._taken = await self.queue.get()
            await self._open.wait()
            self._taken = None
            forwarded = Envelope(self.mesh.new_id("d"), self.address, self.next_hop,
                                 env.identity, env.body)
            await self.mesh.calls.deliver(forwarded)  # the turn waits for the next hop
