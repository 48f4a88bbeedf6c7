"""A small mesh of nodes on the simulated network, and its adapter declaring NETWORK.

Each hub is a node of its own (a host named after it, serving TCP on port 7000) and the
harness's senders post from a node of their own. A routed post is a route leg: the
sender's node connects, writes the delivery as a JSON line and waits for the node's "ok"
under a timeout; no "ok" in time (the node cut off, down, or gone) ends the leg failed and
answers the sender with a failure. A node that restarts after a crash is rebuilt: its hub,
its queue empty, and its server.

`lose_restart=True` makes an adapter whose `restart_node` rebuilds nothing: the negative
control of the network conformance program.
"""

from __future__ import annotations

import asyncio
import itertools
import json

from invariants.adapter import Capability, Chooser, MessageSpec, Route
from invariants.aio import AsyncMeshAdapter, emit
from invariants.aio.net import Network
from invariants.trace import MessageClass

PORT = 7000
REPLY_TIMEOUT_S = 2.0
CLIENT_NODE = "senders"


class NetMiniAdapter(AsyncMeshAdapter):
    capabilities = frozenset({Capability.NETWORK})

    def __init__(self, chooser: Chooser, *, lose_restart: bool = False,
                 silent_rebuild: bool = False) -> None:
        super().__init__(chooser)
        self.network = Network()
        self.network.attach(self.loop)
        self.network.host(CLIENT_NODE)
        self.queues: dict[str, asyncio.Queue[dict[str, str]]] = {}
        self._ids = itertools.count(1)
        self._lose_restart = lose_restart
        self._silent_rebuild = silent_rebuild

    # The nodes.

    def create_hub(self, address: str, *, watermark: int | None = None) -> None:
        self.loop.fresh_lane()
        with self.active():
            self._start(address)
        self.loop.fresh_lane()

    def _start(self, hub: str, *, made: bool = True) -> None:
        host = self.network.host(hub)  # type: ignore[union-attr]
        queue = self.queues[hub] = asyncio.Queue()
        if made:
            emit.hub_created(hub=hub, watermark=100)
        host.create_task(asyncio.start_server(self._serve(hub, queue), None, PORT))
        host.create_task(self._pump(hub, queue))

    def has_hub(self, address: str) -> bool:
        return address in self.queues

    def node_of(self, hub: str) -> str:
        return hub if hub in self.queues else CLIENT_NODE

    def restart_node(self, node: str) -> None:
        if node in self.queues and not self._lose_restart:
            self._start(node, made=not self._silent_rebuild)

    @staticmethod
    async def _pump(hub: str, queue: asyncio.Queue[dict[str, str]]) -> None:
        while True:
            delivery = await queue.get()
            emit.handled(hub=hub, delivery_id=delivery["id"], message_type=delivery["type"])

    @staticmethod
    def _serve(hub: str, queue: asyncio.Queue[dict[str, str]]):  # type: ignore[no-untyped-def]
        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                while line := await reader.readline():
                    delivery = json.loads(line)
                    emit.posted(hub=hub, delivery_id=delivery["id"], sender=delivery["sender"],
                                target=hub, message_type=delivery["type"],
                                message_class=MessageClass(delivery["class"]),
                                packaged=delivery["packaged"])
                    queue.put_nowait(delivery)
                    emit.enqueued(hub=hub, delivery_id=delivery["id"], depth=queue.qsize())
                    writer.write(b"ok\n")
                    await writer.drain()
            except ConnectionError:
                pass  # the sender is gone: its leg ends by its own timeout
            writer.close()
        return serve

    # Posts.

    def post(self, sender: str, target: str, message: MessageSpec, *,
             identity: str | None = "user", route: Route = Route.MONOLITH) -> str:
        did = f"d{next(self._ids)}"
        self.loop.fresh_lane()
        self.network.host(CLIENT_NODE).create_task(  # type: ignore[union-attr]
            self._route(did, sender, target, message, route is not Route.DIRECT))
        self.loop.fresh_lane()
        return did

    async def _route(self, did: str, sender: str, target: str, message: MessageSpec,
                     packaged: bool) -> None:
        leg = f"leg-{did}"
        emit.leg_started(leg_id=leg, leg_kind="route", delivery_id=did, sender=sender,
                         target=target, message_type=message.type_name,
                         message_class=message.message_class, packaged=packaged)
        frame = json.dumps({"id": did, "sender": sender, "type": message.type_name,
                            "class": message.message_class.value,
                            "packaged": packaged}).encode() + b"\n"
        try:
            async with asyncio.timeout(REPLY_TIMEOUT_S):
                reader, writer = await asyncio.open_connection(target, PORT)
                writer.write(frame)
                reply = await reader.readline()
                writer.close()
            delivered = reply == b"ok\n"
        except (TimeoutError, OSError):
            delivered = False
        emit.leg_ended(leg_id=leg, leg_kind="route", delivery_id=did,
                       reason="completed" if delivered else "failed")
        if not delivered:
            self._answer(did, sender, target, message, packaged)

    def _answer(self, did: str, sender: str, target: str, message: MessageSpec,
                packaged: bool) -> None:
        if message.message_class.suppresses_answer:
            emit.answer_suppressed(delivery_id=did, reason="may_answer_false",
                                   message_class=message.message_class, packaged=packaged)
            return
        error = "NotFound" if target not in self.queues else "Unavailable"
        emit.failure_emitted(hub=target, delivery_id=f"f{next(self._ids)}", answers=did,
                             error=error, sender=target, target=sender)


def make(chooser: Chooser) -> NetMiniAdapter:
    return NetMiniAdapter(chooser)


def make_losing_restart(chooser: Chooser) -> NetMiniAdapter:
    return NetMiniAdapter(chooser, lose_restart=True)


def make_silent_rebuild(chooser: Chooser) -> NetMiniAdapter:
    """Rebuilds a restarted node's hub without saying it made it afresh."""
    return NetMiniAdapter(chooser, silent_rebuild=True)
