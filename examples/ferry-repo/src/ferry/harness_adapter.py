"""Ferry behind mesh-harness's adapter protocol, on the simulated network (invariants.aio.net)."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from invariants.adapter import Capability, Chooser, Fault, FaultKind, MessageSpec, Route
from invariants.aio import AsyncMeshAdapter
from invariants.aio.net import Network

from . import config
from .cluster import Cluster, new_subscription
from .config import Settings
from .messages import Delivery


class FerryAdapter(AsyncMeshAdapter):
    capabilities = frozenset({Capability.SUBSCRIBE, Capability.STOP_LIFECYCLE,
                              Capability.GRAIN_ROUTER, Capability.TIMER_TIES})

    def __init__(self, chooser: Chooser, bugs: Iterable[str] = ()) -> None:
        super().__init__(chooser)
        self.network = Network()
        self.network.attach(self.loop)
        self.settings = Settings(bugs=frozenset(bugs))
        self.cluster = Cluster(self.settings, self._on_host)
        self._ids = 0
        self._stop_started = False
        self.loop.fresh_lane()
        self._broker_task = self.network.host(self.settings.broker_host).create_task(
            self.cluster.broker.serve())
        for name in self.settings.nodes:
            self.loop.fresh_lane()
            self._start_node(name)

    def _on_host(self, name: str, coro: Any) -> Any:
        return self.network.host(name).create_task(coro)

    def _start_node(self, name: str) -> None:
        with self.active():
            node = self.cluster.build_node(name)
        node.start_task = self.network.host(name).create_task(node.run())

    def _spawn_on(self, node: str, coro: Any) -> None:
        with self.network.host(node).entered():
            self.spawn(coro)

    # ----- the network ------------------------------------------------------------------
    def node_of(self, hub: str) -> str:
        return self.cluster.node_for(hub)

    def restart_node(self, node: str) -> None:
        self.cluster.node_crashed(node)
        self.loop.fresh_lane()
        self._start_node(node)

    def on_fault(self, fault: Fault) -> None:
        if fault.kind == FaultKind.REMOVE_TARGET:
            self.cluster.remove_hub(fault.target)
        elif fault.kind == FaultKind.CRASH_NODE:
            self.cluster.node_crashed(self.cluster.node_for(fault.target))

    def has_hub(self, address: str) -> bool:
        return self.cluster.hub_exists(address)

    # ----- the protocol -----------------------------------------------------------------
    def create_hub(self, address: str, *, watermark: int | None = None,
                   breaker_threshold: int | None = None) -> None:
        with self.active():
            self.cluster.add_hub(address, config.WATERMARK if watermark is None else watermark,
                                 config.BREAKER_THRESHOLD if breaker_threshold is None
                                 else breaker_threshold)

    def post(self, sender: str, target: str, message: MessageSpec, *,
             identity: str | None = "user", route: Route = Route.MONOLITH) -> str:
        self._ids += 1
        d = Delivery(id=f"d{self._ids}", sender=sender, target=target, type=message.type_name,
                     cls=str(message.message_class), key=message.diagnostic_key,
                     identity=identity, route=str(route))
        with self.active():
            self.cluster.ensure_hub(sender)
        home = self.cluster.node_for(sender)
        if route == Route.DIRECT:
            if self.settings.bug("f06"):
                self._spawn_on(home, self.cluster.land_direct(target, d))
            else:
                self.cluster.direct(d)
                self._spawn_on(home, self.cluster.land_direct(target))
            return d.id
        node = self.cluster.live(home)
        if node is None:
            return d.id                  # the sender's node is down: the post is lost with it
        with self.active():
            leg = node.accept(d, "grain" if route == Route.GRAIN else "route")
        if leg is not None:
            self._spawn_on(home, node.call(leg) if route == Route.GRAIN else node.dispatch(leg))
        return d.id

    def subscribe(self, subscriber: str, target: str, *, retries: int = 5) -> str:
        self._ids += 1
        sub = new_subscription(f"s{self._ids}", subscriber, target, retries)
        with self.active():
            self.cluster.ensure_hub(subscriber)
        home = self.cluster.node_for(subscriber)
        node = self.cluster.live(home)
        if node is not None:
            if self.cluster.stop_asked:
                node.subs[sub.id] = sub
                with self.active():
                    node.end_subscriptions()
            else:
                self._spawn_on(home, node.subscribe(sub))
        return sub.id

    def stop(self, *, graceful: bool = True) -> None:
        with self.active():
            first = self.cluster.request_stop(graceful)
        if first:
            self.spawn(self.cluster.run_stop())


def make(chooser: Chooser) -> FerryAdapter:
    """The clean mesh."""
    return FerryAdapter(chooser)


def _bug(name: str):
    def factory(chooser: Chooser) -> FerryAdapter:
        return FerryAdapter(chooser, bugs=(name,))
    factory.__name__ = factory.__qualname__ = f"bug_{name}"
    factory.harness_mesh_id = f"ferry.harness_adapter:bug_{name}"  # type: ignore[attr-defined]
    return factory


bug_f01 = _bug("f01")
bug_f02 = _bug("f02")
bug_f03 = _bug("f03")
bug_f04 = _bug("f04")
bug_f05 = _bug("f05")
bug_f06 = _bug("f06")
bug_f07 = _bug("f07")
bug_f08 = _bug("f08")
