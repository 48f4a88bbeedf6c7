"""courier behind mesh-harness's adapter protocol: the same node code, on the simulated
network of the harness's virtual loop (three hosts n1, n2, n3)."""
from __future__ import annotations

import asyncio
from typing import Any

from courier.cluster import Cluster
from courier.config import PORT, Config
from courier.notices import Parcel
from invariants.adapter import Capability, Chooser, Fault, FaultKind, MessageSpec, Route
from invariants.aio import AsyncMeshAdapter
from invariants.aio.net import Network

NODES = ("n1", "n2", "n3")


class CourierAdapter(AsyncMeshAdapter):
    capabilities = frozenset({Capability.GRAIN_ROUTER, Capability.SUBSCRIBE,
                              Capability.STOP_LIFECYCLE})

    def __init__(self, chooser: Chooser, bugs: frozenset[str] = frozenset()) -> None:
        super().__init__(chooser)
        self.network = Network()
        self.network.attach(self.loop)
        self.cfg = Config(bugs=bugs)
        self.cluster = Cluster(list(NODES), self.cfg, {n: (n, PORT) for n in NODES})
        self.cluster.fault_book = self.rig.faults
        self.ids = 0
        self.direct_sent: dict[tuple[str, str, str, int], int] = {}
        self.down: set[str] = set()   # nodes crashed and not yet restarted
        for name in NODES:
            self._start(name)

    def _start(self, name: str) -> None:
        host = self.network.host(name)
        with host.entered():
            self.spawn(self.cluster.nodes[name].start(), name=f"start {name}")

    # -- the network capability ---------------------------------------------------------
    def node_of(self, hub: str) -> str:
        return self.cluster.node_of(hub) or NODES[0]

    def restart_node(self, node: str) -> None:
        self.down.discard(node)
        with self.active():
            self.cluster.rebuild(node)
        self._start(node)

    def on_fault(self, fault: Fault) -> None:
        if fault.kind is FaultKind.CRASH_NODE:
            node = self.node_of(fault.target)
            self.down.add(node)
            with self.active():
                self.cluster.crashed(node)

    # -- the protocol -------------------------------------------------------------------
    def has_hub(self, address: str) -> bool:
        return address in self.cluster.placement

    def create_hub(self, address: str, *, watermark: int | None = None) -> None:
        if address in self.cluster.placement:
            return
        with self.active():
            node = self.cluster.place(address, watermark)
        with self.network.host(node.name).entered():
            self.spawn(self._start_hub(node.name, address))

    async def _start_hub(self, node: str, hub: str) -> None:
        h = self.cluster.nodes[node].hubs.get(hub)
        if h is not None and h.task is None:
            h.start()

    def post(self, sender: str, target: str, message: MessageSpec, *,
             identity: str | None = "user", route: Route = Route.MONOLITH) -> str:
        self.create_hub(sender)
        self.ids += 1
        p = Parcel(f"d{self.ids}", sender=sender, target=target, type=message.type_name,
                   kind=str(message.message_class), key=message.diagnostic_key,
                   identity=identity)
        home = self.cluster.node_of(sender) or NODES[0]
        if route == Route.DIRECT:
            where = self.cluster.node_of(target)
            if where is None:
                with self.network.host(home).entered():
                    self.spawn(self.cluster.nodes[home].give_back(p, "NotFound"))
                return p.id
            # direct drops are numbered per (sender, hub) for one incarnation of the hub's node
            epoch = self.cluster.epochs[where]
            n = self.direct_sent.get((sender, target, where, epoch), 0)
            self.direct_sent[(sender, target, where, epoch)] = n + 1
            with self.network.host(where).entered():
                self.spawn(self._direct(where, p, n, epoch))
        else:
            with self.network.host(home).entered():
                if route == Route.GRAIN:
                    self.spawn(self._node_call(home, p))
                else:
                    self.spawn(self._node_route(home, p))
        return p.id

    async def _node_route(self, home: str, p: Parcel) -> None:
        await self.cluster.nodes[home].route(p)

    async def _node_call(self, home: str, p: Parcel) -> None:
        await self.cluster.nodes[home].call(p)

    async def _direct(self, where: str, p: Parcel, n: int, epoch: int) -> None:
        node = self.cluster.nodes[where]
        if node.epoch != epoch:
            return  # dropped at an incarnation of the node that crashed: lost with it
        await node.deliver_direct(p, n)

    def subscribe(self, subscriber: str, target: str, *, retries: int = 5) -> str:
        self.create_hub(subscriber)
        self.ids += 1
        sid = f"s{self.ids}"
        home = self.cluster.node_of(subscriber) or NODES[0]
        with self.active():
            self.cluster.open_subscription(sid, home, subscriber)
            if self.cluster.stop_done:
                self.cluster.end_subscription(sid, 0, "silo_stopped")
                return sid
            if home in self.down:  # the subscriber's node is down: nothing can be sent
                self.cluster.end_subscription(sid, 0, "retries_exhausted:crashed")
                return sid
        with self.network.host(home).entered():
            self.spawn(self._sub(home, sid, subscriber, target, retries))
        return sid

    async def _sub(self, home: str, sid: str, subscriber: str, target: str,
                   retries: int) -> None:
        node = self.cluster.nodes[home]
        if sid not in self.cluster.subscriptions:
            return  # ended before it began (the stop, or a crash of its node)
        node.subs[sid] = asyncio.current_task()  # type: ignore[assignment]
        await node.subscribe(sid, subscriber, target, retries)

    def stop(self, *, graceful: bool = True) -> None:
        with self.active():
            begin = self.cluster.request_stop(graceful)
        if begin:
            # the stop is run by the cluster's control plane (where the host's stop request
            # lands), not by a node: a crash of any one node cannot lose it
            self.spawn(self.cluster.run_stop(), name="stop")


def make(chooser: Chooser) -> CourierAdapter:
    return CourierAdapter(chooser)


def _bug(name: str) -> Any:
    def factory(chooser: Chooser) -> CourierAdapter:
        return CourierAdapter(chooser, bugs=frozenset({name}))
    factory.__name__ = f"bug_{name}"
    return factory


bug_c01 = _bug("c01")
bug_c02 = _bug("c02")
bug_c03 = _bug("c03")
bug_c04 = _bug("c04")
bug_c05 = _bug("c05")
bug_c06 = _bug("c06")
bug_c07 = _bug("c07")
bug_c08 = _bug("c08")
bug_c09 = _bug("c09")
bug_c10 = _bug("c10")
bug_c11 = _bug("c11")
