"""The cluster: placement, ids, legs in flight and the staged stop, over lantern nodes."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Callable, Coroutine
from typing import Any

from invariants.aio import emit
from invariants.trace import MessageClass

from lantern.config import STAGE_DETACHING, STAGE_FINAL, STAGE_SERVING, Figures
from lantern.messages import Envelope
from lantern.node import Node

SILO = "silo"
Launch = Callable[[str | None, Coroutine[Any, Any, Any]], Any]


class Cluster:
    def __init__(self, node_names: tuple[str, ...], figures: Figures | None = None, *,
                 bugs: frozenset[str] = frozenset(),
                 launch: Launch | None = None, listen: Callable[[str], tuple[Any, int]] | None = None,
                 dial: Callable[[str], tuple[str, int]] | None = None) -> None:
        self.figures = figures if figures is not None else Figures()
        self.bugs = bugs  # planted-bug switches: empty outside the harness's bug factories
        self.node_names = tuple(node_names)
        self.nodes: dict[str, Node] = {}
        self.home: dict[str, str] = {}       # every hub ever placed -> its node
        self.directory: dict[str, str] = {}  # live hubs -> their node
        self.hub_conf: dict[str, tuple[int, int]] = {}
        self.legs: OrderedDict[str, tuple[Node, str, str]] = OrderedDict()
        self.ports: dict[str, int] = {}
        self.kept_breakers: dict[str, Any] = {}
        self.tasks: set[asyncio.Task[Any]] = set()
        self._counters: dict[str, int] = {}
        self._launch = launch
        self._listen = listen
        self._dial = dial
        self.stop_asked = False
        self.stop_graceful = True
        self.stopping = False
        self.stopped = False
        self.given_up = False
        self.gates_closed = False
        self._changed = asyncio.Event()
        self.done = asyncio.Event()
        for name in self.node_names:
            self.build_node(name)

    # ---- plumbing -----------------------------------------------------------------------
    def bug(self, name: str) -> bool:
        return name in self.bugs

    def new_id(self, prefix: str) -> str:
        n = self._counters.get(prefix, 0) + 1
        self._counters[prefix] = n
        return f"{prefix}{n}"

    def launch(self, node: str | None, coro: Coroutine[Any, Any, Any]) -> Any:
        if self._launch is not None:
            return self._launch(node, coro)
        task = asyncio.get_running_loop().create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    def listen_addr(self, node: str) -> tuple[Any, int]:
        return self._listen(node) if self._listen else ("127.0.0.1", 0)

    def dial_addr(self, node: str) -> tuple[str, int]:
        return self._dial(node) if self._dial else ("127.0.0.1", self.ports[node])

    def listening(self, node: str, server: asyncio.AbstractServer) -> None:
        sockets = getattr(server, "sockets", None) or ()
        for sock in sockets:
            self.ports[node] = sock.getsockname()[1]

    # ---- nodes and hubs -----------------------------------------------------------------
    def build_node(self, name: str) -> Node:
        old = self.nodes.get(name)
        node = self.nodes[name] = Node(self, name, 0 if old is None else old.incarnation + 1)
        node.start_task = self.launch(name, node.start())
        if old is not None:
            for hub, home in self.directory.items():
                if home == name:
                    node.build_hub(hub, *self.hub_conf[hub])
        return node

    def node_crashed(self, name: str) -> None:
        node = self.nodes[name]
        node.dead = True
        for leg_id in [leg for leg, (owner, _, _) in self.legs.items() if owner is node]:
            del self.legs[leg_id]  # lost with the node: no word of them
        self._changed.set()

    def add_hub(self, name: str, watermark: int | None = None, threshold: int | None = None) -> None:
        if name in self.home:
            return
        node_name = self.node_names[len(self.home) % len(self.node_names)]
        self.home[name] = self.directory[name] = node_name
        conf = self.hub_conf[name] = (
            self.figures.watermark if watermark is None else watermark,
            self.figures.breaker_threshold if threshold is None else threshold)
        node = self.nodes[node_name]
        if not node.dead:
            node.build_hub(name, *conf)

    def remove_hub(self, name: str) -> None:
        node_name = self.directory.pop(name, None)
        if node_name is None:
            return
        hub = self.nodes[node_name].hubs.pop(name, None)
        if hub is not None:
            hub.close()

    def node_of(self, hub: str) -> str:
        return self.home.get(hub, self.node_names[0])

    # ---- posts --------------------------------------------------------------------------
    def post(self, env: Envelope, route: str) -> None:
        if route == "direct":
            target_node = self.directory.get(env["tgt"])
            if target_node is None:
                self.answer_from_sender(env, "NotFound")
                return
            node = self.nodes[target_node]
            if node.dead:
                return  # lost with the node
            if self.bug("l05"):
                self.launch(target_node, node.take_own(env))
                return
            node.lane(env["snd"], env["tgt"])[0].append(env)
            self.launch(target_node, node.take_direct(env["snd"], env["tgt"]))
            return
        node = self.nodes[self.node_of(env["snd"])]
        if not node.dead:
            node.dispatch(env, route)

    def answer_from_sender(self, env: Envelope, error: str) -> None:
        node = self.nodes[self.node_of(env["snd"])]
        if not node.dead:
            node.answer(env, error)

    def open_subscription(self, sid: str, owner: str, target: str, retries: int) -> None:
        node = self.nodes[self.node_of(owner)]
        if not node.dead:
            node.open_subscription(sid, owner, target, retries)

    # ---- legs ---------------------------------------------------------------------------
    def in_flight(self) -> int:
        return len(self.legs)

    def start_leg(self, node: Node, kind: str, env: Envelope) -> str:
        leg = node.local_id("L") if self.bug("l01") else self.new_id("L")
        self.legs[leg] = (node, kind, env["id"])
        emit.leg_started(hub=node.router, leg_id=leg, leg_kind=kind, delivery_id=env["id"],
                         depth=len(self.legs), sender=env["snd"], target=env["tgt"],
                         message_type=env["type"], message_class=_cls(env), packaged=env["pkg"],
                         subscription_id=env["sub"])
        return leg

    def leg_open(self, leg: str) -> bool:
        return leg in self.legs

    def end_leg(self, leg: str, reason: str) -> None:
        entry = self.legs.pop(leg, None)
        if entry is None:
            return
        node, kind, delivery = entry
        emit.leg_ended(hub=node.router, leg_id=leg, leg_kind=kind, delivery_id=delivery,
                       depth=len(self.legs), reason=reason)
        self._changed.set()

    # ---- the staged stop ----------------------------------------------------------------
    def request_stop(self, graceful: bool) -> Coroutine[Any, Any, None] | None:
        """Ask for the stop; a non-graceful ask while a graceful stop runs is the give-up."""
        if self.stop_asked:
            if not graceful and self.stop_graceful and not self.stopped:
                self.given_up = True
                self._changed.set()
            return None
        self.stop_asked = True
        self.stop_graceful = graceful
        self.stopping = True
        emit.stop_requested(hub=SILO, graceful=graceful, depth=len(self.legs))
        return self._stop(graceful)

    async def _stop(self, graceful: bool) -> None:
        loop = asyncio.get_running_loop()
        emit.stop_stage_entered(hub=SILO, stage=STAGE_SERVING, depth=len(self.legs))
        if graceful and not self.given_up and self.legs:
            emit.stop_hold_started(hub=SILO, depth=len(self.legs))
            deadline = loop.time() + self.figures.stop_budget_ms / 1000
            reason = "drained"
            while self._holding():
                if self.given_up:
                    reason = "cancelled"
                    break
                self._changed.clear()
                try:
                    async with asyncio.timeout_at(deadline):
                        await self._changed.wait()
                except TimeoutError:
                    reason = "budget"
                    break
            if reason == "budget":
                for leg, (_, kind, delivery) in self.legs.items():
                    emit.residual_leg(hub=SILO, leg_id=leg, leg_kind=kind, delivery_id=delivery)
            emit.stop_hold_released(hub=SILO, reason=reason, depth=len(self.legs))
        emit.stop_stage_left(hub=SILO, stage=STAGE_SERVING, depth=len(self.legs))
        for leg in list(self.legs):
            self.end_leg(leg, "drained")  # cut: the stop no longer waits for it
        emit.stop_stage_entered(hub=SILO, stage=STAGE_DETACHING, depth=0)
        self.gates_closed = True
        for node in self.nodes.values():
            for hub in node.hubs.values():
                hub.gate_closed = True
        emit.stop_stage_left(hub=SILO, stage=STAGE_DETACHING, depth=0)
        emit.stop_stage_entered(hub=SILO, stage=STAGE_FINAL, depth=0)
        self.stopped = True
        for node in self.nodes.values():
            if not node.dead:
                node.end_subscriptions()
        emit.stop_stage_left(hub=SILO, stage=STAGE_FINAL, depth=0)
        emit.stop_completed(hub=SILO)
        self.done.set()

    def _holding(self) -> bool:
        if self.bug("l10"):
            return any(kind == "route" for _, kind, _ in self.legs.values())
        return bool(self.legs)

    async def close(self) -> None:
        for node in self.nodes.values():
            await node.close()


def _cls(env: Envelope) -> MessageClass:
    return MessageClass(env["cls"])
