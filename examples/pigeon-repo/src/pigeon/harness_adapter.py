"""Pigeon behind mesh-harness's adapter protocol: three nodes on the simulated network.

The nodes are the same code as in production (`pigeon.node`, `pigeon.transport`): each runs
on its own host of an `invariants.aio.net.Network` attached to the adapter's virtual loop
and talks to the others over its UDP endpoint. `make` is the clean mesh; each `bug_pNN`
switches one planted flaw on (`Settings.flaws`).
"""

from __future__ import annotations

from invariants.adapter import Capability, Chooser, Fault, FaultKind, MessageSpec, Route
from invariants.aio import AsyncMeshAdapter
from invariants.aio.net import Network
from pigeon.cluster import Cluster
from pigeon.letters import Letter
from pigeon.node import Node
from pigeon.settings import Settings

NODES = ("n1", "n2", "n3")
PORT = 7400


class PigeonAdapter(AsyncMeshAdapter):
    capabilities = frozenset({Capability.GRAIN_ROUTER, Capability.SUBSCRIBE,
                              Capability.STOP_LIFECYCLE, Capability.BREAKER_THRESHOLD,
                              Capability.NETWORK})

    def __init__(self, chooser: Chooser, flaws: frozenset[str] = frozenset()) -> None:
        super().__init__(chooser)
        self.network = Network()
        self.network.attach(self.loop)
        self.cluster = Cluster(Settings(flaws=flaws), {n: (n, PORT) for n in NODES},
                               lambda: self.loop.now_ms)
        self.posts = 0
        self.tasks: list[object] = []
        self.subscriptions = 0
        for name in NODES:
            self._start(name)
        self.loop.advance(0)

    def _start(self, name: str) -> Node:
        node = self.cluster.build_node(name)
        self.loop.fresh_lane()
        self.tasks.append(self.network.host(name).create_task(node.start(),
                                                              name=f"start {name}"))
        self.loop.fresh_lane()
        return node

    def _node(self, hub: str) -> Node | None:
        name = self.cluster.place(hub)
        node = self.cluster.nodes.get(name)
        up = self.network is not None and self.network.hosts[name].up
        return node if node is not None and node.alive and up else None

    def _ensure_hub(self, address: str, watermark: int | None = None,
                    breaker_threshold: int | None = None) -> None:
        if address in self.cluster.directory or address in self.cluster.home:
            return
        name = self.cluster.place(address)
        self.cluster.hub_specs[address] = (watermark, breaker_threshold)
        self.cluster.directory[address] = name
        node = self._node(address)
        if node is not None:
            with self.active(), self.network.host(name).entered():
                self.loop.fresh_lane()
                node.add_hub(address)
                self.loop.fresh_lane()

    # The protocol.

    def create_hub(self, address: str, *, watermark: int | None = None,
                   breaker_threshold: int | None = None) -> None:
        self._ensure_hub(address, watermark, breaker_threshold)

    def post(self, sender: str, target: str, message: MessageSpec, *,
             identity: str | None = "user", route: Route = Route.MONOLITH) -> str:
        self.posts += 1
        letter = Letter(id=f"d{self.posts}", sender=sender, target=target,
                        body=message.type_name, kind=str(message.message_class.value),
                        topic=message.diagnostic_key, identity=identity,
                        route=str(Route(route).value))
        self._ensure_hub(sender)
        origin = self._node(sender)
        if origin is None:
            return letter.id  # the sender's node is down: the post is lost with it
        host = self.network.host(origin.name)
        if route == Route.DIRECT:
            dest = self.cluster.directory.get(target)
            node = self.cluster.nodes.get(dest) if dest is not None else None
            if node is not None and node.alive and target in node.hubs and (
                    self.network.hosts[node.name].up):
                with self.network.host(node.name).entered():
                    self.loop.fresh_lane()
                    node.hand_in(letter)
                    self.loop.fresh_lane()
            elif dest is None:
                self.spawn_on(host, origin, lambda: origin.bounce(letter, "NotFound"))
            return letter.id
        self.spawn_on(host, origin, lambda: origin.dispatch(letter, str(Route(route).value)))
        return letter.id

    def spawn_on(self, host, node: Node, action) -> None:  # type: ignore[no-untyped-def]
        async def run() -> None:
            action()
        self.loop.fresh_lane()
        self.tasks.append(host.create_task(run()))
        self.loop.fresh_lane()

    def subscribe(self, subscriber: str, target: str, *, retries: int = 5) -> str:
        self.subscriptions += 1
        sid = f"s{self.subscriptions}"
        self._ensure_hub(subscriber)
        node = self._node(subscriber)
        if node is not None:
            self.spawn_on(self.network.host(node.name), node,
                          lambda: node.subscribe(sid, subscriber, target, retries))
        return sid

    def stop(self, *, graceful: bool = True) -> None:
        with self.active():
            self.loop.fresh_lane()
            self.cluster.stop(graceful, self.loop)
            self.loop.fresh_lane()

    def on_fault(self, fault: Fault) -> None:
        if fault.kind is FaultKind.REMOVE_TARGET:
            name = self.cluster.directory.pop(fault.target, None)
            node = self.cluster.nodes.get(name) if name is not None else None
            if node is not None:
                node.remove_hub(fault.target)

    def has_hub(self, address: str) -> bool:
        return address in self.cluster.directory

    def node_of(self, hub: str) -> str:
        return self.cluster.home.get(hub, NODES[0])

    def restart_node(self, node: str) -> None:
        old = self.cluster.nodes.get(node)
        if old is not None:
            old.shut()
        self._start(node)


def make(chooser: Chooser) -> PigeonAdapter:
    return PigeonAdapter(chooser)


def _bug(flaw: str):  # type: ignore[no-untyped-def]
    def factory(chooser: Chooser) -> PigeonAdapter:
        return PigeonAdapter(chooser, frozenset({flaw}))
    factory.__name__ = f"bug_{flaw}"
    return factory


bug_p01 = _bug("late-dedupe")
bug_p02 = _bug("boot-not-persisted")
bug_p03 = _bug("resend-unacked-call")
bug_p04 = _bug("hold-skips-silent-peers")
bug_p05 = _bug("retransmit-cap")
bug_p06 = _bug("seq-only-dedupe")
