"""The cluster: membership (which node hosts which hub) and the staged stop.

The stop runs in stages, highest first: SERVING (300) holds, when the stop is graceful,
until no leg is in flight on any live node or the budget is spent; DETACHING (200) closes
every hub's teardown gate; FINAL (100) cuts what is left, ends open subscriptions and
closes the nodes' links.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from invariants.aio import emit
from pigeon.node import Disk, Node
from pigeon.settings import STAGE_DETACHING, STAGE_FINAL, STAGE_SERVING, Settings

SILO = "cluster"


class Cluster:
    def __init__(self, settings: Settings, addresses: dict[str, tuple[str, int]],
                 now_ms: Callable[[], int]) -> None:
        self.settings = settings
        self.addresses = dict(addresses)
        self.now_ms = now_ms
        self.home: dict[str, str] = {}        # every hub ever placed -> its node
        self.directory: dict[str, str] = {}   # live hubs -> their node
        self.hub_specs: dict[str, tuple[int | None, int | None]] = {}
        self.disks: dict[str, Disk] = {name: Disk() for name in sorted(addresses)}
        self.nodes: dict[str, Node] = {}
        self.order = 0
        self.placed = 0
        self.stopping = False
        self.graceful = True
        self.gave_up = False
        self.completed = False
        self.gates_closed = False
        self.calls_closed = False
        self.stop_task: asyncio.Task[None] | None = None
        self.changed: asyncio.Event | None = None
        # Calls (delivery id, attempt) refused as they left (an injected rejection).
        self.refuse: set[tuple[str, int]] = set()

    # Membership.

    def node_names(self) -> list[str]:
        return sorted(self.addresses)

    def place(self, hub: str) -> str:
        """The node a new hub goes to: round robin, in the order hubs are made."""
        if hub not in self.home:
            names = self.node_names()
            self.home[hub] = names[self.placed % len(names)]
            self.placed += 1
        return self.home[hub]

    def hubs_on(self, node: str) -> list[str]:
        return [h for h, n in self.directory.items() if n == node]

    def build_node(self, name: str, bind_host: str | None = None) -> Node:
        node = Node(name, self, self.disks[name], self.addresses[name][1], bind_host)
        self.nodes[name] = node
        return node

    def next_order(self) -> int:
        self.order += 1
        return self.order

    def legs_in_flight(self) -> int:
        return sum(len(n.legs) for n in self.nodes.values() if n.alive)

    def leg_ended(self) -> None:
        if self.changed is not None:
            self.changed.set()

    def node_went(self, name: str) -> None:
        if self.changed is not None:
            self.changed.set()

    # The stop.

    def stop(self, graceful: bool, loop: asyncio.AbstractEventLoop) -> None:
        if self.stopping:
            if not graceful and self.graceful:
                self.gave_up = True  # the host gave up on the graceful stop
                if self.changed is not None:
                    self.changed.set()
            return
        self.stopping = True
        self.graceful = graceful
        emit.stop_requested(hub=SILO, graceful=graceful, depth=self.legs_in_flight())
        self.stop_task = loop.create_task(self._stop(), name="stop")

    async def _stop(self) -> None:
        self.changed = asyncio.Event()
        emit.stop_stage_entered(hub=SILO, stage=STAGE_SERVING, depth=self.legs_in_flight())
        if self.graceful and not self.gave_up and self.legs_in_flight():
            await self._hold()
        emit.stop_stage_left(hub=SILO, stage=STAGE_SERVING, depth=self.legs_in_flight())
        emit.stop_stage_entered(hub=SILO, stage=STAGE_DETACHING, depth=self.legs_in_flight())
        self.gates_closed = True
        for name in self.node_names():
            node = self.nodes.get(name)
            if node is not None:
                for hub in node.hubs.values():
                    hub.gate_closed = True
        emit.stop_stage_left(hub=SILO, stage=STAGE_DETACHING, depth=self.legs_in_flight())
        emit.stop_stage_entered(hub=SILO, stage=STAGE_FINAL, depth=self.legs_in_flight())
        # Calls that reached a callee are taken up (and run, or turned away at the closed
        # gates) before the stop completes: a slow callee still holds them. From here on a
        # call arriving is answered unavailable, never taken up.
        self.calls_closed = True
        waiting = [t for name in self.node_names()
                   if (node := self.nodes.get(name)) is not None and node.alive
                   for t in node.call_tasks if not t.done()]
        if waiting:
            await asyncio.wait(waiting)
        for name in self.node_names():
            node = self.nodes.get(name)
            if node is not None and node.alive:
                node.cut_legs()
        for name in self.node_names():
            node = self.nodes.get(name)
            if node is not None and node.alive:
                node.end_subscriptions()
        self.completed = True
        emit.stop_stage_left(hub=SILO, stage=STAGE_FINAL, depth=0)
        for name in self.node_names():
            node = self.nodes.get(name)
            if node is not None and node.link is not None:
                node.link.close()
        emit.stop_completed(hub=SILO)

    async def _hold(self) -> None:
        assert self.changed is not None
        loop = asyncio.get_running_loop()
        emit.stop_hold_started(hub=SILO, depth=self.legs_in_flight())
        deadline = loop.time() + self.settings.stop_budget_ms / 1000
        reason = "drained"
        while self.legs_in_flight():
            if self.gave_up:
                reason = "cancelled"
                break
            self.changed.clear()
            left = deadline - loop.time()
            if left <= 0:
                reason = "budget"
                break
            if self.settings.has("hold-skips-silent-peers"):
                left = min(left, 0.5)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), left)
            if self.settings.has("hold-skips-silent-peers"):
                self._give_up_on_silent_legs(loop.time())
        if reason == "budget":
            legs = [leg for n in self.nodes.values() if n.alive for leg in n.legs.values()]
            for leg in sorted(legs, key=lambda g: g.order):
                emit.residual_leg(hub=SILO, leg_id=leg.leg_id, leg_kind=leg.kind,
                                  delivery_id=leg.letter.id)
        emit.stop_hold_released(hub=SILO, reason=reason, depth=self.legs_in_flight())

    def _give_up_on_silent_legs(self, now: float) -> None:
        for node in self.nodes.values():
            if not node.alive:
                continue
            for leg in sorted(node.legs.values(), key=lambda g: g.order):
                if leg.out is not None and node.link is not None and (
                        (leg.out.peer, leg.out.seq) in node.link.outgoing
                        and now - leg.out.sent_at > 1.0):
                    node.link.forget(leg.out)
                    node.end_leg(leg, "drained")
