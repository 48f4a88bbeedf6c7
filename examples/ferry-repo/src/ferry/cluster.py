"""The control plane: placement, the hubs' registry, the staged stop, direct intake."""
from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable
from typing import Any

from invariants.aio import emit

from . import config
from .broker import Broker
from .config import Settings
from .messages import Delivery
from .node import Node, Subscription

SILO = "ferry"


class Cluster:
    def __init__(self, settings: Settings,
                 host_runner: Callable[[str, Any], asyncio.Task] | None = None) -> None:
        self.settings = settings
        self.broker = Broker(settings.broker_port, replay_on_reconnect=settings.bug("f03"))
        self.nodes: dict[str, Node | None] = {n: None for n in settings.nodes}
        self.epochs: dict[str, int] = {n: 0 for n in settings.nodes}
        self.registry: dict[str, tuple[int, int]] = {}
        self.removed: set[str] = set()
        self.arrivals: dict[str, deque[Delivery]] = {}
        self._host_runner = host_runner
        self._order = 0
        self.stop_asked = False
        self.graceful = True
        self.given_up = False
        self.gates_closed = False
        self.completed = False
        self.changed = asyncio.Event()

    # ----- placement and hosts ----------------------------------------------------------
    def node_for(self, hub: str) -> str:
        return self.settings.nodes[sum(hub.encode()) % len(self.settings.nodes)]

    def live(self, name: str) -> Node | None:
        node = self.nodes.get(name)
        return node if node is not None and not node.dead else None

    def on_host(self, name: str, coro: Any) -> asyncio.Task:
        if self._host_runner is not None:
            return self._host_runner(name, coro)
        return asyncio.get_event_loop().create_task(coro)

    def next_order(self) -> int:
        self._order += 1
        return self._order

    # ----- nodes ------------------------------------------------------------------------
    def build_node(self, name: str) -> Node:
        self.epochs[name] += 1
        node = Node(self, name, self.epochs[name])
        self.nodes[name] = node
        for address, (watermark, threshold) in self.registry.items():
            gone = address in self.removed and not self.settings.bug("f01")
            if not gone and self.node_for(address) == name:
                if self.settings.bug("f02"):
                    threshold = config.BREAKER_THRESHOLD   # rebuilt from the defaults
                node.make_hub(address, watermark, threshold)
        return node

    def node_crashed(self, name: str) -> None:
        """The machine went down: whatever the node held is gone, and says nothing."""
        node = self.nodes.get(name)
        if node is not None:
            node.dead = True
            node.legs.clear()
            node.subs.clear()
            self.nodes[name] = None
            self.changed.set()
        # A direct post waits here for its landing task, which ran on its sender's node:
        # those tasks died with it, so their posts are lost with it (left queued, each would
        # be landed in place of a later post, which would then never land).
        for queue in self.arrivals.values():
            kept = [d for d in queue if self.node_for(d.sender) != name]
            queue.clear()
            queue.extend(kept)

    # ----- hubs -------------------------------------------------------------------------
    def add_hub(self, address: str, watermark: int, threshold: int) -> None:
        self.registry[address] = (watermark, threshold)
        self.removed.discard(address)
        node = self.live(self.node_for(address))
        if node is not None and address not in node.hubs:
            node.make_hub(address, watermark, threshold)

    def ensure_hub(self, address: str) -> None:
        if address not in self.registry:
            self.add_hub(address, config.WATERMARK, config.BREAKER_THRESHOLD)

    def remove_hub(self, address: str) -> None:
        self.removed.add(address)
        node = self.live(self.node_for(address))
        if node is not None:
            node.remove_hub(address)

    def hub_exists(self, address: str) -> bool:
        return address in self.registry and address not in self.removed

    # ----- direct intake ----------------------------------------------------------------
    def direct(self, d: Delivery) -> None:
        """Queue a direct post for its target's intake, in the order posted."""
        self.arrivals.setdefault(d.target, deque()).append(d)

    async def land_direct(self, target: str, d: Delivery | None = None) -> None:
        if d is None:
            queue = self.arrivals.get(target)
            if not queue:
                return
            d = queue.popleft()
        node = self.live(self.node_for(target))
        if node is None:
            return                      # the node is down: lost with it
        hub = node.hubs.get(target)
        if hub is not None:
            hub.offer(d)
            return
        sender = self.live(self.node_for(d.sender))
        if sender is not None:
            sender.answer(d, "NotFound")

    # ----- legs and the stop ------------------------------------------------------------
    def legs_in_flight(self) -> int:
        return sum(len(n.legs) for n in self.nodes.values() if n is not None and not n.dead)

    def leg_ended(self) -> None:
        self.changed.set()

    def request_stop(self, graceful: bool) -> bool:
        """Begin the stop (True), or give up on a graceful one already running (False)."""
        if self.stop_asked:
            if not graceful and self.graceful and not self.completed:
                self.given_up = True
                self.changed.set()
            return False
        self.stop_asked, self.graceful = True, graceful
        emit.stop_requested(hub=SILO, graceful=graceful, depth=self.legs_in_flight())
        for node in self.nodes.values():
            if node is not None:
                node.accepting = False
                node.end_subscriptions()
        return True

    async def run_stop(self) -> None:
        serving, detaching, final = config.STAGE_SERVING, config.STAGE_DETACHING, config.STAGE_FINAL
        emit.stop_stage_entered(hub=SILO, stage=serving, depth=self.legs_in_flight())
        if self.graceful and not self.given_up and self.legs_in_flight():
            await self._hold()
        emit.stop_stage_left(hub=SILO, stage=serving, depth=self.legs_in_flight())
        emit.stop_stage_entered(hub=SILO, stage=detaching, depth=self.legs_in_flight())
        self.gates_closed = True
        for node in self.nodes.values():
            if node is not None:
                for hub in node.hubs.values():
                    hub.gate_open = False
        emit.stop_stage_left(hub=SILO, stage=detaching, depth=self.legs_in_flight())
        emit.stop_stage_entered(hub=SILO, stage=final, depth=self.legs_in_flight())
        live = [n for n in self.nodes.values() if n is not None and not n.dead]
        for node in live:
            node.drain()
        for node in live:
            node.end_subscriptions()
        emit.stop_stage_left(hub=SILO, stage=final, depth=0)
        self.completed = True
        emit.stop_completed(hub=SILO)

    async def _hold(self) -> None:
        loop = asyncio.get_running_loop()
        emit.stop_hold_started(hub=SILO, depth=self.legs_in_flight())
        deadline = loop.time() + config.STOP_BUDGET_MS / 1000
        while self.legs_in_flight() and not self.given_up:
            self.changed.clear()
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), remaining)
        if self.given_up:
            emit.stop_hold_released(hub=SILO, reason="cancelled", depth=self.legs_in_flight())
        elif not self.legs_in_flight():
            emit.stop_hold_released(hub=SILO, reason="drained", depth=0)
        else:
            legs = sorted((leg for n in self.nodes.values() if n is not None and not n.dead
                           for leg in n.legs.values()), key=lambda x: x.order)
            for leg in legs:
                emit.residual_leg(hub=SILO, leg_id=leg.id, leg_kind=leg.kind,
                                  delivery_id=leg.delivery.id)
            emit.stop_hold_released(hub=SILO, reason="budget", depth=len(legs))


def new_subscription(sub_id: str, subscriber: str, target: str, retries: int) -> Subscription:
    return Subscription(sub_id, subscriber, target, retries)


__all__ = ["Cluster", "new_subscription"]
