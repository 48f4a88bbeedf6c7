"""nodemesh behind mesh-harness's adapter protocol: its nodes on the harness's network.

Each node is built by the mesh's own factory (`make_node`) and started on a host of its
own of a simulated network (`invariants.aio.net`) attached to the kit's virtual loop, so
its transport (`asyncio.start_server`, `open_connection`, the length-prefixed frames) runs
unchanged and the network's faults (partitions, held links, crashes) reach it as they
would a real one. The hubs the harness makes are placed on three nodes in the order it
makes them (round-robin); its outside senders (a hub made by a post) are clients of a
gateway node, so what they route crosses the wire; a name the harness never made is
addressed on a node chosen from its spelling, where it is missing.

Routes: a `direct` post runs on the target's node and goes straight onto the hub's intake;
a `monolith` post is dispatched by the sender's node, so it crosses the wire when the
target lives elsewhere; a `grain` post is the same dispatch, reported with its attempts (a
nodemesh leg is a call: attempts under a response timeout, refusals re-sent with capped
backoff, never a re-send after a timeout). The harness's call faults reach nodemesh
through its `Hooks`: a rejection is decided as the call leaves its caller and refused by
the callee; a timeout is a call the callee receives but holds until its caller has given
up; a slow destination delays each attempt at the callee, inside the caller's response
timeout; a blocked hub holds its turn.
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Coroutine, Iterator, Mapping
from contextlib import contextmanager
from types import MappingProxyType
from typing import Any

from invariants.adapter import Capability, Chooser, Fault, FaultKind, MessageSpec, Route
from invariants.aio import AsyncMeshAdapter
from invariants.aio.net import Network
from invariants.aio.points import turn
from invariants.trace import EventKind, MessageClass

from .envelope import Envelope, Traffic
from .hooks import Hooks
from .legs import Leg
from .node import Node, make_node
from .observer import Observer
from .settings import Roster, Settings, Stage

NODES = ("n1", "n2", "n3")  # the nodes hosting the hubs the harness makes
GATEWAY = "gw"  # the node of the harness's outside senders (a hub made by a post)
HOSTS = (*NODES, GATEWAY)
PORT = 7000
MESH = "mesh"  # where the stop of the whole mesh happens

TRAFFIC: Mapping[MessageClass, Traffic] = MappingProxyType({
    MessageClass.USER: Traffic.USER, MessageClass.SYSTEM: Traffic.SYSTEM,
    MessageClass.LIFECYCLE: Traffic.LIFECYCLE, MessageClass.IGNORABLE: Traffic.HEARTBEAT,
    MessageClass.FAILURE: Traffic.FAILURE,
})
CLASSES: Mapping[Traffic, MessageClass] = MappingProxyType({v: k for k, v in TRAFFIC.items()})
LEG_ENDS: Mapping[str, str] = MappingProxyType(
    {"landed": "completed", "failed": "failed", "cut": "drained"})
WITHHELD: Mapping[str, str] = MappingProxyType(
    {"may_answer_false": "may_answer_false", "stopped": "silo_stopped"})


class HarnessRaise(Exception):
    """Raised by a hub's handler for a message the harness posted to raise."""


def hub_name(address: str) -> str:
    """'n1/h0' -> 'h0': the harness names a hub without its node."""
    return address.partition("/")[2] or address


class _Trace(Observer):
    """nodemesh's observer events, as the harness's trace events."""

    def __init__(self, adapter: NodeMeshAdapter) -> None:
        self.a = adapter

    def _emit(self, kind: EventKind, **fields: Any) -> None:
        self.a.emit(kind, **{k: v for k, v in fields.items() if v is not None})

    def _facts(self, env: Envelope) -> dict[str, Any]:
        return {"delivery_id": env.id, "sender": hub_name(env.sender),
                "target": hub_name(env.target), "message_type": env.kind,
                "message_class": CLASSES[env.traffic], "diagnostic_key": env.key}

    # Hubs and their intake.
    def hub_opened(self, node: str, hub: str, *, watermark: int, capacity: int) -> None:
        self._emit(EventKind.HUB_CREATED, hub=hub_name(hub), watermark=watermark)

    def offered(self, node: str, hub: str, env: Envelope, *, packaged: bool) -> None:
        # nodemesh packages only what crosses the wire: a routed post between two hubs of
        # one node arrives unpackaged, which the harness reads off the route (left out).
        routed = self.a.routes.get(env.id, Route.MONOLITH) is not Route.DIRECT
        self._emit(EventKind.POSTED, hub=hub_name(hub), **self._facts(env),
                   packaged=True if packaged else (None if routed else False))

    def queued(self, node: str, hub: str, env: Envelope, *, depth: int) -> None:
        self._emit(EventKind.ENQUEUED, hub=hub_name(hub), delivery_id=env.id, depth=depth)

    def unvouched(self, node: str, hub: str, env: Envelope) -> None:
        self._emit(EventKind.REJECTED, hub=hub_name(hub), delivery_id=env.id,
                   error="Unvouched")

    def gated(self, node: str, hub: str, env: Envelope) -> None:
        self._emit(EventKind.GATED, hub=hub_name(hub), delivery_id=env.id)

    def shed(self, node: str, hub: str, env: Envelope, *, depth: int, watermark: int) -> None:
        self._emit(EventKind.SHED, hub=hub_name(hub), delivery_id=env.id, depth=depth,
                   watermark=watermark, error="Ignored")

    def handled(self, node: str, hub: str, env: Envelope) -> None:
        self._emit(EventKind.HANDLED, hub=hub_name(hub), delivery_id=env.id,
                   message_type=env.kind)

    def handler_raised(self, node: str, hub: str, env: Envelope, *, error: str) -> None:
        self._emit(EventKind.HANDLER_FAULTED, hub=hub_name(hub), delivery_id=env.id,
                   error=error)

    # Legs.
    @staticmethod
    def _leg_kind(leg: Leg) -> str:
        # A failure answer travelling is a NACK leg; a post or call (a grain delivery too:
        # its calls are part of its leg) is a route leg.
        return "nack" if leg.kind == "answer" else "route"

    def leg_opened(self, node: str, leg: Leg, env: Envelope, *, in_flight: int) -> None:
        self.a.legs[leg.id] = (self._leg_kind(leg), leg.env_id)
        self._emit(EventKind.LEG_STARTED, hub=node, leg_id=leg.id, leg_kind=self._leg_kind(leg),
                   depth=in_flight, packaged=True, **self._facts(env))

    def leg_closed(self, node: str, leg: Leg, *, outcome: str, in_flight: int) -> None:
        self.a.hooks.caller_done(leg.env_id)
        self.a.legs.pop(leg.id, None)
        self._emit(EventKind.LEG_ENDED, hub=node, leg_id=leg.id, leg_kind=self._leg_kind(leg),
                   delivery_id=leg.env_id, depth=in_flight, reason=LEG_ENDS[outcome])

    def dispatch_refused(self, node: str, env: Envelope, *, error: str) -> None:
        self._emit(EventKind.DISPATCH_REFUSED, hub=node, **self._facts(env), error=error)

    # Calls: reported for the deliveries the harness sent as grain calls.
    def sent(self, node: str, env: Envelope, *, callee: str, attempt: int) -> None:
        if env.id in self.a.grain:
            self._emit(EventKind.ATTEMPT, hub=node, delivery_id=env.id,
                       target=hub_name(env.target), attempt=attempt)

    def taken(self, node: str, env: Envelope, *, attempt: int) -> None:
        if env.id in self.a.grain and not self.a.hooks.received_early(env.id, attempt):
            self._emit(EventKind.CALL_RECEIVED, hub=hub_name(env.target), delivery_id=env.id,
                       attempt=attempt)

    def send_failed(self, node: str, env: Envelope, *, attempt: int, error: str,
                    timed_out: bool) -> None:
        self.a.hooks.caller_gave_up(env.id, attempt)
        if env.id in self.a.grain:
            self._emit(EventKind.ATTEMPT_FAILED, hub=node, delivery_id=env.id,
                       attempt=attempt, error=error, timed_out=timed_out)

    # Failure answers.
    def failure_sent(self, node: str, answer: Envelope, *, answers: str, error: str) -> None:
        self._emit(EventKind.FAILURE_EMITTED, hub=hub_name(answer.sender), delivery_id=answer.id,
                   answers=answers, error=error, sender=hub_name(answer.sender),
                   target=hub_name(answer.target), message_type=answer.kind,
                   message_class=MessageClass.FAILURE)

    def answer_withheld(self, node: str, env: Envelope, *, reason: str) -> None:
        # Packaged when it failed on its way over the wire (its leg is still open).
        crossed = any(env_id == env.id for _, env_id in self.a.legs.values())
        self._emit(EventKind.ANSWER_SUPPRESSED, hub=node, delivery_id=env.id,
                   reason=WITHHELD[reason], message_class=CLASSES[env.traffic],
                   packaged=True if crossed else None)

    # The staged stop: each node's stop, told as the one stop of the mesh (_MeshStop).
    def stop_asked(self, node: str, *, graceful: bool, in_flight: int) -> None:
        self.a.mesh_stop.asked()

    def stage_entered(self, node: str, stage: int, *, in_flight: int) -> None:
        self.a.mesh_stop.at(node, ENTERED[stage])

    def stage_left(self, node: str, stage: int, *, in_flight: int) -> None:
        self.a.mesh_stop.at(node, ENTERED[stage] + 1)

    def hold_began(self, node: str, *, in_flight: int) -> None:
        self.a.mesh_stop.hold_began()

    def left_behind(self, node: str, leg: Leg) -> None:
        self.a.mesh_stop.budget_spent()

    def hold_ended(self, node: str, *, reason: str, in_flight: int) -> None:
        self.a.mesh_stop.hold_ended(reason)

    def stopped(self, node: str) -> None:
        self.a.mesh_stop.at(node, COMPLETED)


# A node's progress through its stop: entering a stage, then leaving it (+1); completed.
ENTERED: Mapping[int, int] = MappingProxyType(
    {int(Stage.QUIESCE): 1, int(Stage.DETACH): 3, int(Stage.DISCONNECT): 5})
COMPLETED = 7
STEPS: Mapping[int, tuple[EventKind, int | None]] = MappingProxyType({
    1: (EventKind.STOP_STAGE_ENTERED, int(Stage.QUIESCE)),
    2: (EventKind.STOP_STAGE_LEFT, int(Stage.QUIESCE)),
    3: (EventKind.STOP_STAGE_ENTERED, int(Stage.DETACH)),
    4: (EventKind.STOP_STAGE_LEFT, int(Stage.DETACH)),
    5: (EventKind.STOP_STAGE_ENTERED, int(Stage.DISCONNECT)),
    6: (EventKind.STOP_STAGE_LEFT, int(Stage.DISCONNECT)),
    7: (EventKind.STOP_COMPLETED, None),
})


class _MeshStop:
    """The nodes' stops, told as one stop of the mesh (the harness knows one).

    The nodes stop side by side (as `Cluster.stop` does). The mesh enters a stage when its
    first node does and leaves it when its last node has; it holds while any node holds,
    its hold ending with the last one (its reason: `budget` if any node's budget ran out,
    else `cancelled` if the host gave up, else `drained`); its budget runs out when the
    nodes' do (their holds begin in one instant), and the residual legs are then every leg
    in flight in the mesh, oldest first. A node that crashes during the stop is done with it.
    """

    def __init__(self, adapter: NodeMeshAdapter) -> None:
        self.a = adapter
        self.graceful = True  # the host's request
        self.requested = False
        self.positions: dict[str, int] = {}
        self.step = 0
        self.held = False
        self.residuals_named = False
        self.reasons: set[str] = set()

    def begin(self, nodes: list[str], graceful: bool) -> None:
        self.graceful = graceful
        self.positions = dict.fromkeys(nodes, 0)
        if not nodes:  # every node is down: nothing runs, the stop is over at once
            self.asked()
            self._advance()

    def asked(self) -> None:
        if not self.requested:
            self.requested = True
            self.a.emit(EventKind.STOP_REQUESTED, hub=MESH, graceful=self.graceful,
                        depth=len(self.a.legs))

    def at(self, node: str, position: int) -> None:
        if node in self.positions:
            self.positions[node] = max(self.positions[node], position)
            self._advance()

    def gone(self, node: str) -> None:
        """`node` crashed: its part of the stop is over."""
        self.at(node, COMPLETED)

    def hold_began(self) -> None:
        if not self.held and self.step == 1:
            self.held = True
            self.a.emit(EventKind.STOP_HOLD_STARTED, hub=MESH, depth=len(self.a.legs))

    def budget_spent(self) -> None:
        if not self.residuals_named:
            self.residuals_named = True
            for leg_id, (kind, env_id) in self.a.legs.items():
                self.a.emit(EventKind.RESIDUAL_LEG, hub=MESH, leg_id=leg_id, leg_kind=kind,
                            delivery_id=env_id)

    def hold_ended(self, reason: str) -> None:
        self.reasons.add(reason)

    def _advance(self) -> None:
        positions = list(self.positions.values())
        while self.step < COMPLETED:
            step = self.step + 1
            reached = (max(positions, default=COMPLETED) if step == 1
                       else min(positions, default=COMPLETED)) >= step
            if not reached:
                return
            self.step = step
            if step == 2 and self.held:
                reason = next((r for r in ("budget", "cancelled") if r in self.reasons),
                              "drained")
                self.a.emit(EventKind.STOP_HOLD_RELEASED, hub=MESH, reason=reason,
                            depth=len(self.a.legs))
            kind, stage = STEPS[step]
            if stage is None:
                self.a.emit(kind, hub=MESH)
            else:
                self.a.emit(kind, hub=MESH, stage=stage, depth=len(self.a.legs))


class _RigHooks(Hooks):
    """The harness's faults, through nodemesh's seams."""

    def __init__(self, adapter: NodeMeshAdapter) -> None:
        self.a = adapter
        self._rejected: set[tuple[str, int]] = set()
        self._held: dict[tuple[str, int], asyncio.Future[None]] = {}
        self._received: set[tuple[str, int]] = set()

    async def before_send(self, node: str, env: Envelope, attempt: int) -> None:
        # A rejection is spent by the call about to leave (its ATTEMPT comes next, with no
        # await between), and carried out by the callee.
        target = hub_name(env.target)
        faults = self.a.rig.faults
        if (env.id in self.a.grain and target not in faults.removed
                and faults.take(FaultKind.REJECT_NEXT, target) is not None):
            self._rejected.add((env.id, attempt))

    async def before_take(self, node: str, env: Envelope, attempt: int) -> str | None:
        key = (env.id, attempt)
        if key in self._rejected:
            self._rejected.discard(key)
            return "Rejected"
        target = hub_name(env.target)
        faults = self.a.rig.faults
        # A slow destination: the attempt has left (its caller's response timeout runs) and
        # takes this long to be taken up.
        delay = faults.slow_ms(target)
        if delay:
            await asyncio.sleep(delay / 1000)
        if (env.id in self.a.grain and target not in faults.removed
                and self.a.hosts_hub(node, target)
                and faults.take(FaultKind.TIMEOUT_NEXT, target) is not None):
            # Received, and held until the caller gave up: it runs only after that.
            self._received.add(key)
            self.a.emit(EventKind.CALL_RECEIVED, hub=target, delivery_id=env.id,
                        attempt=attempt)
            held = asyncio.get_running_loop().create_future()
            self._held[key] = held
            await held
        return None

    async def before_turn(self, hub: str) -> None:
        await turn(hub_name(hub))

    def received_early(self, env_id: str, attempt: int) -> bool:
        """Whether the callee reported this call received as it held it."""
        key = (env_id, attempt)
        if key in self._received:
            self._received.discard(key)
            return True
        return False

    def caller_gave_up(self, env_id: str, attempt: int) -> None:
        held = self._held.pop((env_id, attempt), None)
        if held is not None and not held.done():
            held.set_result(None)

    def caller_done(self, env_id: str) -> None:
        for key in [key for key in self._held if key[0] == env_id]:
            self.caller_gave_up(*key)


class NodeMeshAdapter(AsyncMeshAdapter):
    capabilities = frozenset({Capability.GRAIN_ROUTER, Capability.STOP_LIFECYCLE,
                              Capability.RAISING_HANDLERS, Capability.NETWORK})

    def __init__(self, chooser: Chooser, *, settings: Settings | None = None) -> None:
        super().__init__(chooser)
        self.settings = settings or Settings()
        self.network = Network()
        self.network.attach(self.loop)
        self.roster = Roster()
        self.observer = _Trace(self)
        self.hooks = _RigHooks(self)
        self.mesh_stop = _MeshStop(self)
        self.nodes: dict[str, Node] = {}
        self.running: dict[str, bool] = {}  # built and not crashed since
        self.placed: dict[str, str] = {}  # harness hub -> the node hosting it, in order made
        self.watermarks: dict[str, int | None] = {}
        self.routes: dict[str, Route] = {}
        self.grain: set[str] = set()
        self.legs: dict[str, tuple[str, str]] = {}  # in flight: leg id -> (kind, delivery)
        self.tasks: list[asyncio.Task[Any]] = []  # what the adapter started on the nodes
        self._direct: dict[tuple[str, str], list[Envelope]] = {}
        self._stop_lane = False  # calls made after stop() and before the next drive
        self._stopping = False
        self._graceful = True  # what the host wants of the stop now
        self.loop.set_exception_handler(_report)
        for name in HOSTS:
            self.network.host(name)
            self.roster.add(name, name, PORT)
        for name in HOSTS:
            self._build(name)

    # Nodes and hubs.

    def _build(self, name: str) -> None:
        node = make_node(name, self.roster, settings=self.settings, observer=self.observer,
                         hooks=self.hooks)
        self.nodes[name] = node
        self.running[name] = True
        for hub, where in self.placed.items():
            if where == name and hub not in self.rig.faults.removed:
                self._open(node, hub)
        self._on_host(name, node.start(), f"start {name}")

    def _open(self, node: Node, hub: str) -> None:
        node.open_hub(hub, _handle, watermark=self.watermarks.get(hub))

    def node_of(self, hub: str) -> str:
        placed = self.placed.get(hub)
        if placed is not None:
            return placed
        return NODES[zlib.crc32(hub.encode()) % len(NODES)]

    def hosts_hub(self, node: str, hub: str) -> bool:
        return self.placed.get(hub) == node

    def has_hub(self, address: str) -> bool:
        return address in self.placed

    def _address(self, hub: str) -> str:
        return f"{self.node_of(hub)}/{hub}"

    def create_hub(self, address: str, *, watermark: int | None = None) -> None:
        if address not in self.placed:
            made = sum(1 for node in self.placed.values() if node != GATEWAY)
            self._place(address, NODES[made % len(NODES)], watermark)

    def _place(self, hub: str, node: str, watermark: int | None = None) -> None:
        self.placed[hub] = node
        self.watermarks[hub] = watermark
        with self.active():
            self._open(self.nodes[node], hub)

    def restart_node(self, node: str) -> None:
        # A node is rebuilt as at start; once the mesh is stopping, its host keeps it down.
        if not self._stopping:
            self._build(node)

    def on_fault(self, fault: Fault) -> None:
        if fault.kind is FaultKind.REMOVE_TARGET and fault.target in self.placed:
            # nodemesh has no call that closes one hub: the rig takes it off its node, so
            # what is addressed to it from now on finds no such hub.
            self.nodes[self.placed[fault.target]]._hubs.pop(fault.target, None)
        elif fault.kind is FaultKind.CRASH_NODE:
            node = self.node_of(fault.target)
            if not self.network.hosts[node].up:  # type: ignore[union-attr]
                self.running[node] = False
                self.mesh_stop.gone(node)
                # A direct lane's task ran on its target's host and died with it: its posts
                # are lost with the node, and the next post opens a lane afresh (left, the
                # lane took every later post of its sender and never ran).
                self._direct = {key: lane for key, lane in self._direct.items()
                                if self.node_of(key[1]) != node}

    # Posts and the stop.

    @contextmanager
    def _lane(self) -> Iterator[None]:
        # Each call is an arrival of its own, except after stop(): until the next drive,
        # what the harness asks follows the stop it asked first.
        if not self._stop_lane:
            self.loop.fresh_lane()
        with self.active():
            yield
        if not self._stop_lane:
            self.loop.fresh_lane()

    def _on_host(self, node: str, coro: Coroutine[Any, Any, Any], name: str) -> bool:
        """Run `coro` on `node`'s host, if the node runs (a node down runs nothing)."""
        if not self.running[node]:
            coro.close()
            return False
        with self._lane():
            self.tasks.append(
                self.network.hosts[node].create_task(coro, name=name))  # type: ignore[union-attr]
        if len(self.tasks) > 256:
            self.tasks = [task for task in self.tasks if not task.done()]
        return True

    def post(self, sender: str, target: str, message: MessageSpec, *,
             identity: str | None = "user", route: Route = Route.MONOLITH) -> str:
        if sender not in self.placed:
            # An outside sender gets a hub of its own for its answers, on the gateway.
            self._place(sender, GATEWAY)
        route = Route(route)
        at = self.node_of(target) if route is Route.DIRECT else self.node_of(sender)
        traffic = TRAFFIC[MessageClass(message.message_class)]
        body: dict[str, Any] | None = {"raise": True} if message.handler_raises else None
        if traffic is Traffic.FAILURE:  # an answer to a delivery outside the run
            body = {"answers": "outside", "error": "Lost"}
        env = self.nodes[at].envelope(self._address(sender), self._address(target),
                                      message.type_name, body, traffic=traffic,
                                      key=message.diagnostic_key, identity=identity)
        self.routes[env.id] = route
        if route is Route.GRAIN:
            self.grain.add(env.id)
        if route is Route.DIRECT:
            # One sender's direct posts to one target arrive in the order it made them.
            lane = self._direct.get((sender, target))
            if lane is not None:
                lane.append(env)
            elif self._on_host(at, self._direct_lane(at, (sender, target)), f"post {env.id}"):
                self._direct[(sender, target)] = [env]
        elif self._stop_lane:
            # Asked after the stop: it follows the stop's first step, which refuses it.
            self._on_host(at, self._dispatch(at, env), f"post {env.id}")
        elif self.running[at]:
            # A routed post is dispatched in the call (a stop asked later must find its leg
            # started): nodemesh's dispatch is synchronous, run as its node's host runs it.
            with self._lane(), self._calling(at):
                self.nodes[at].dispatch(env)
        return env.id

    @contextmanager
    def _calling(self, node: str) -> Iterator[None]:
        """Call `node`'s synchronous API from outside the loop, as code on its host: the
        tasks it starts are the loop's and run on that host from the next drive on."""
        previous = asyncio.events._get_running_loop()
        asyncio.events._set_running_loop(self.loop)
        try:
            with self.network.hosts[node].entered():  # type: ignore[union-attr]
                yield
        finally:
            asyncio.events._set_running_loop(previous)

    async def _dispatch(self, at: str, env: Envelope) -> None:
        self.nodes[at].dispatch(env)

    async def _direct_lane(self, at: str, key: tuple[str, str]) -> None:
        for env in self._direct.pop(key):
            self.nodes[at].dispatch(env)

    def subscribe(self, subscriber: str, target: str, *, retries: int = 5) -> str:
        raise NotImplementedError("nodemesh has no subscriptions")

    def stop(self, *, graceful: bool = True) -> None:
        """Stop every node, side by side, as `Cluster.stop` does. A give-up (graceful=False
        while a graceful stop runs) asks each node again; a node whose stop has not begun
        yet then begins it non-graceful, as its host no longer waits."""
        first = not self._stopping
        self._stopping = True
        self._graceful = self._graceful and graceful
        if first:
            self.loop.fresh_lane()
            self._stop_lane = True
            running = [name for name in HOSTS if self.running[name]]
            with self.active():
                self.mesh_stop.begin(running, graceful)
        if first or not graceful:
            for name in HOSTS:
                self._on_host(name, self._stop_node(name), f"stop {name}")

    async def _stop_node(self, name: str) -> None:
        await self.nodes[name].stop(self._graceful)

    def advance(self, ms: int) -> None:
        self._stop_lane = False
        super().advance(ms)

    def run_until_idle(self, limit_ms: int) -> bool:
        self._stop_lane = False
        return super().run_until_idle(limit_ms)


def _report(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """The loop's exception handler, less one line: on Python 3.11 asyncio logs an
    "Exception in callback StreamReaderProtocol..." for a connection handler that a crash
    cancelled (docs/network.md), which says nothing about the mesh."""
    if (isinstance(context.get("exception"), asyncio.CancelledError)
            and "StreamReaderProtocol" in str(context.get("message", ""))):
        return
    loop.default_exception_handler(context)


async def _handle(env: Envelope) -> object:
    if isinstance(env.body, dict) and env.body.get("raise") is True:
        raise HarnessRaise(f"{env.kind} {env.id} asked its handler to raise")
    return None


def make(chooser: Chooser) -> NodeMeshAdapter:
    """The adapter factory named in pyproject.toml's [tool.harness] adapter."""
    return NodeMeshAdapter(chooser)


# The planted faults (PLANTED.json): the same mesh with one named switch on. Off in `make`.

def _bugged(chooser: Chooser, name: str) -> NodeMeshAdapter:
    return NodeMeshAdapter(chooser, settings=Settings(bugs=frozenset({name})))


def bug_n01(chooser: Chooser) -> NodeMeshAdapter:
    return _bugged(chooser, "n01")


def bug_n02(chooser: Chooser) -> NodeMeshAdapter:
    return _bugged(chooser, "n02")


def bug_n03(chooser: Chooser) -> NodeMeshAdapter:
    return _bugged(chooser, "n03")


def bug_n04(chooser: Chooser) -> NodeMeshAdapter:
    return _bugged(chooser, "n04")


def bug_n05(chooser: Chooser) -> NodeMeshAdapter:
    return _bugged(chooser, "n05")


def bug_n06(chooser: Chooser) -> NodeMeshAdapter:
    return _bugged(chooser, "n06")


def bug_n07(chooser: Chooser) -> NodeMeshAdapter:
    return _bugged(chooser, "n07")


def bug_n09(chooser: Chooser) -> NodeMeshAdapter:
    return _bugged(chooser, "n09")


def bug_n10(chooser: Chooser) -> NodeMeshAdapter:
    return _bugged(chooser, "n10")


def bug_n11(chooser: Chooser) -> NodeMeshAdapter:
    return _bugged(chooser, "n11")


def bug_n12(chooser: Chooser) -> NodeMeshAdapter:
    return _bugged(chooser, "n12")
