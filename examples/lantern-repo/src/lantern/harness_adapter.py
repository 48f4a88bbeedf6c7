"""Lantern behind mesh-harness's adapter protocol, its nodes on the simulated network.

`make` is the clean mesh; `bug_lNN` are the planted bugs (see PLANTED.json).
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any

from invariants.adapter import Capability, Chooser, Fault, FaultKind, MessageSpec, Route
from invariants.aio import AsyncMeshAdapter
from invariants.aio.net import Network

from lantern.cluster import Cluster
from lantern.config import Figures
from lantern.messages import envelope

NODES = ("n1", "n2", "n3")
PORT = 7400


class LanternAdapter(AsyncMeshAdapter):
    capabilities = frozenset({Capability.GRAIN_ROUTER, Capability.SUBSCRIBE,
                              Capability.STOP_LIFECYCLE, Capability.BREAKER_THRESHOLD})

    def __init__(self, chooser: Chooser, bugs: frozenset[str] = frozenset()) -> None:
        super().__init__(chooser)
        self.network = Network()
        self.network.attach(self.loop)
        for name in NODES:
            self.network.host(name)
        with self.active():
            self.cluster = Cluster(NODES, Figures(), bugs=bugs, launch=self._launch,
                                   listen=lambda node: (None, PORT),
                                   dial=lambda node: (node, PORT))

    def _launch(self, node: str | None, coro: Coroutine[Any, Any, Any]) -> Any:
        if node is None:
            return self.loop.create_task(coro) if self.loop.is_running() else self.spawn(coro)
        with self.network.host(node).entered():
            return self.loop.create_task(coro) if self.loop.is_running() else self.spawn(coro)

    # ---- the protocol -------------------------------------------------------------------
    def create_hub(self, address: str, *, watermark: int | None = None,
                   breaker_threshold: int | None = None) -> None:
        with self.active():
            self.cluster.add_hub(address, watermark, breaker_threshold)

    def post(self, sender: str, target: str, message: MessageSpec, *,
             identity: str | None = "user", route: Route = Route.MONOLITH) -> str:
        with self.active():
            self.cluster.add_hub(sender)
            did = self.cluster.new_id("d")
            env = envelope(did, sender, target, message.type_name, str(message.message_class),
                           key=message.diagnostic_key, identity=identity)
            self.cluster.post(env, str(route))
        return did

    def subscribe(self, subscriber: str, target: str, *, retries: int = 5) -> str:
        with self.active():
            self.cluster.add_hub(subscriber)
            sid = self.cluster.new_id("s")
            self.cluster.open_subscription(sid, subscriber, target, retries)
        return sid

    def stop(self, *, graceful: bool = True) -> None:
        with self.active():
            coro = self.cluster.request_stop(graceful)
            if coro is not None:
                self._launch(None, coro)

    # ---- the kit's hooks ----------------------------------------------------------------
    def has_hub(self, address: str) -> bool:
        return address in self.cluster.directory

    def on_fault(self, fault: Fault) -> None:
        if fault.kind == FaultKind.REMOVE_TARGET:
            with self.active():
                self.cluster.remove_hub(fault.target)
        elif fault.kind == FaultKind.CRASH_NODE:
            self.cluster.node_crashed(self.node_of(fault.target))

    def node_of(self, hub: str) -> str:
        return self.cluster.node_of(hub)

    def restart_node(self, node: str) -> None:
        with self.active():
            self.cluster.build_node(node)


def _factory(*bugs: str) -> Any:
    def factory(chooser: Chooser) -> LanternAdapter:
        return LanternAdapter(chooser, frozenset(bugs))
    return factory


make = _factory()
bug_l01 = _factory("l01")
bug_l02 = _factory("l02")
bug_l03 = _factory("l03")
bug_l04 = _factory("l04")
bug_l05 = _factory("l05")
bug_l06 = _factory("l06")
bug_l07 = _factory("l07")
bug_l08 = _factory("l08")
bug_l09 = _factory("l09")
bug_l10 = _factory("l10")
bug_l11 = _factory("l11")
bug_l12 = _factory("l12")
