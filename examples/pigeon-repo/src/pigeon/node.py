"""A pigeon node: its hubs, its router (routed letters as legs, calls with correlation ids),
its subscriptions, and its `PeerLink` to the other nodes."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from invariants.adapter import FaultKind
from invariants.aio import emit, receiving, sending, slowdown
from invariants.trace import MessageClass
from pigeon.hub import Hub
from pigeon.letters import FAILURE, SYSTEM, Letter, ReturnSlip, warrants_reply
from pigeon.transport import Outgoing, PeerLink

if TYPE_CHECKING:
    from pigeon.cluster import Cluster

REFUSED = "Refused"  # the callee refused the call: it holds nothing, a re-send is safe


@dataclass
class Leg:
    leg_id: str
    kind: str       # route, grain or nack
    letter: Letter
    order: int
    dest: str | None = None
    task: asyncio.Task[None] | None = None
    out: Outgoing | None = None


@dataclass
class Subscription:
    sid: str
    subscriber: str
    target: str
    retries: int
    pending: str | None = None
    answer: asyncio.Future[tuple[str, str]] | None = None
    task: asyncio.Task[None] | None = None
    attempt: int = 0
    open: bool = True


@dataclass
class Call:
    cid: str
    dest: str
    reply: asyncio.Future[str]
    out: Outgoing | None = None


@dataclass
class Disk:
    """What a node keeps across restarts."""

    boots: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


def _cls(letter: Letter) -> MessageClass:
    return MessageClass(letter.kind)


class Node:
    def __init__(self, name: str, cluster: Cluster, disk: Disk, port: int,
                 bind_host: str | None = None) -> None:
        self.name = name
        self.cluster = cluster
        self.settings = cluster.settings
        self.disk = disk
        self.port = port
        self.bind_host = bind_host
        self.router = f"router@{name}"
        self.hubs: dict[str, Hub] = {}
        self.legs: dict[str, Leg] = {}
        self.calls: dict[str, Call] = {}
        self.subs: dict[str, Subscription] = {}
        # Calls that reached this node and are not yet done with (the callee's side).
        self.call_tasks: set[asyncio.Task[Any]] = set()
        self.tasks: set[asyncio.Task[Any]] = set()
        self.alive = False
        self.boot = 0
        self.counter = 0
        self.link: PeerLink | None = None
        self.loop: asyncio.AbstractEventLoop | None = None

    # Life.

    async def start(self) -> None:
        self.loop = asyncio.get_running_loop()
        if self.settings.has("boot-not-persisted"):
            self.boot = 1
        else:
            self.disk.boots += 1
            self.boot = self.disk.boots
        # Every node is its own peer too: a call to a hub of this node goes out through
        # its own socket (loopback) like any other.
        peers = dict(self.cluster.addresses)
        self.link = PeerLink(self.name, self.boot, self.port, peers, self.settings,
                             self._received, self._abandoned)
        self.link.peer_restarted = self._peer_restarted
        await self.link.open(self.bind_host)
        self.alive = True
        for hub in sorted(self.cluster.hubs_on(self.name)):
            self.add_hub(hub)
        for peer in sorted(peers):
            if peer != self.name:
                self.link.send(peer, {"k": "hello"})
        self._spawn(self._life())

    async def _life(self) -> None:
        try:
            await asyncio.Event().wait()
        finally:  # the process is gone: nothing it had in hand will end by itself
            self.alive = False
            if self.link is not None:
                self.link.close()
            self.cluster.node_went(self.name)

    def shut(self) -> None:
        if self.link is not None:
            self.link.close()
        for hub in self.hubs.values():
            hub.close()
        for task in list(self.tasks):
            task.cancel()

    def _spawn(self, coro: Any, name: str | None = None) -> asyncio.Task[Any]:
        assert self.loop is not None
        task = self.loop.create_task(coro, name=name)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    def new_id(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}.{self.name}.{self.boot}.{self.counter}"

    # Hubs.

    def add_hub(self, address: str, watermark: int | None = None) -> Hub:
        spec = self.cluster.hub_specs.get(address, (None, None))
        hub = Hub(address, self.name, self.settings, watermark=spec[0],
                  breaker_threshold=spec[1], now_ms=self.cluster.now_ms,
                  on_turn=self._turn)
        if self.cluster.gates_closed:
            hub.gate_closed = True
        self.hubs[address] = hub
        assert self.loop is not None
        hub.start(self.loop)
        return hub

    def remove_hub(self, address: str) -> None:
        hub = self.hubs.pop(address, None)
        if hub is not None:
            hub.close()

    def hand_in(self, letter: Letter) -> None:
        """A letter handed straight to one of this node's hubs (the direct route)."""
        hub = self.hubs.get(letter.target)
        if hub is not None:
            hub.hand_in(letter)

    def _turn(self, hub: Hub, letter: Letter) -> None:
        if letter.kind == FAILURE and letter.answers is not None:
            for sub in self.subs.values():
                if sub.pending == letter.answers and sub.answer and not sub.answer.done():
                    sub.answer.set_result(("failed", letter.error or "failed"))
        if letter.body == "SubscribeRequest" and letter.sub_id is not None:
            home = self.cluster.home.get(letter.sender)
            message = {"k": "sub_ok", "rid": letter.id}
            if home is not None:
                self._send(home, message)

    # Legs.

    def start_leg(self, kind: str, letter: Letter) -> Leg:
        leg = Leg(self.new_id("L"), kind, letter, self.cluster.next_order())
        self.legs[leg.leg_id] = leg
        emit.leg_started(hub=self.router, leg_id=leg.leg_id, leg_kind=kind,
                         delivery_id=letter.id, sender=letter.sender, target=letter.target,
                         message_type=letter.body, message_class=_cls(letter),
                         packaged=letter.packaged, subscription_id=letter.sub_id,
                         depth=self.cluster.legs_in_flight())
        return leg

    def end_leg(self, leg: Leg, reason: str) -> bool:
        if self.legs.pop(leg.leg_id, None) is None:
            return False
        emit.leg_ended(hub=self.router, leg_id=leg.leg_id, leg_kind=leg.kind,
                       delivery_id=leg.letter.id, reason=reason,
                       depth=self.cluster.legs_in_flight())
        self.cluster.leg_ended()
        return True

    def cut_legs(self) -> None:
        for leg in sorted(self.legs.values(), key=lambda g: g.order):
            if leg.task is not None:
                leg.task.cancel()
            if leg.out is not None and self.link is not None:
                self.link.forget(leg.out)
            self.end_leg(leg, "drained")

    # The router: sending a letter on.

    def dispatch(self, letter: Letter, route: str) -> None:
        if self.cluster.stopping:
            emit.dispatch_refused(hub=self.router, delivery_id=letter.id, sender=letter.sender,
                                  target=letter.target, message_type=letter.body,
                                  message_class=_cls(letter), diagnostic_key=letter.topic,
                                  packaged=True, error="ShuttingDown")
            self.bounce(letter, "ShuttingDown")
            return
        letter = letter.packed()
        leg = self.start_leg("grain" if route == "grain" else "route", letter)
        dest = self.cluster.directory.get(letter.target)
        if dest is None:
            self.end_leg(leg, "failed")
            self.bounce(letter, "NotFound")
            return
        leg.dest = dest
        if route == "grain":
            leg.task = self._spawn(self._call(leg))
        else:
            leg.out = self._send(dest, {"k": "deliver", "letter": letter.to_wire(),
                                        "leg": leg.leg_id})

    def _send(self, dest: str, message: dict[str, Any]) -> Outgoing | None:
        assert self.link is not None
        return self.link.send(dest, message)

    def _reply(self, dest: str, message: dict[str, Any]) -> None:
        self._send(dest, message)

    async def _take_up(self, origin: str, letter: Letter, leg_id: str) -> None:
        """A routed letter reached this node: offer it to its hub and tell its origin."""
        if letter.target not in self.hubs:
            self._reply(origin, {"k": "landed", "leg": leg_id, "status": "notfound"})
            return
        await slowdown(letter.target)
        hub = self.hubs.get(letter.target)
        if hub is None:
            self._reply(origin, {"k": "landed", "leg": leg_id, "status": "notfound"})
            return
        if self.cluster.completed:
            return
        hub.offer(letter)
        self._reply(origin, {"k": "landed", "leg": leg_id, "status": "ok"})

    def _landed(self, message: dict[str, Any]) -> None:
        leg = self.legs.get(message["leg"])
        if leg is None:
            return
        if message["status"] == "ok":
            self.end_leg(leg, "completed")
        else:
            self.end_leg(leg, "failed")
            self.bounce(leg.letter, "NotFound")

    # Calls (the grain route): request, response, a timeout, re-sends of refusals.

    async def _call(self, leg: Leg) -> None:
        letter, settings = leg.letter, self.settings
        assert leg.dest is not None and self.loop is not None
        attempt = 0
        while True:
            call = Call(self.new_id("c"), leg.dest, self.loop.create_future())
            self.calls[call.cid] = call
            # The call leaves: a fault armed for its target is decided here, in call order
            # (no await between this and the ATTEMPT); a refusal is carried out by the
            # callee for this very call, however many copies of its datagram arrive.
            fault = sending(letter.target)
            if fault is not None and fault.kind is FaultKind.REJECT_NEXT:
                self.cluster.refuse.add((letter.id, attempt))
            emit.attempt(hub=self.router, delivery_id=letter.id, sender=letter.sender,
                         target=letter.target, message_type=letter.body,
                         message_class=_cls(letter), attempt=attempt)
            message = {"k": "call", "letter": letter.to_wire(), "cid": call.cid,
                       "attempt": attempt, "reply_to": self.name}
            assert self.link is not None
            call.out = self.link.send(leg.dest, message)
            # The response timeout runs from when the call is sent.
            timeout = settings.response_timeout_ms / 1000
            try:
                status = await asyncio.wait_for(call.reply, timeout)
            except TimeoutError:
                status = "timeout"
            finally:
                self.calls.pop(call.cid, None)
            if status == "ok":
                self.end_leg(leg, "completed")
                return
            if status == "timeout":
                emit.attempt_failed(hub=self.router, delivery_id=letter.id, attempt=attempt,
                                    error="ResponseTimeout", timed_out=True)
                unsent = call.out is not None and self.link is not None and (
                    (call.out.peer, call.out.seq) in self.link.outgoing)
                if unsent and settings.has("resend-unacked-call"):
                    attempt += 1  # it never left this node: send it again
                    continue
                if call.out is not None and self.link is not None:
                    self.link.forget(call.out)
                self.end_leg(leg, "failed")
                self.bounce(letter, "Timeout")
                return
            if status == REFUSED:
                emit.attempt_failed(hub=self.router, delivery_id=letter.id, attempt=attempt,
                                    error=REFUSED, timed_out=False)
                if attempt < settings.delivery_retries:
                    await asyncio.sleep(settings.retry_delay_ms(attempt) / 1000)
                    attempt += 1
                    continue
                self.end_leg(leg, "failed")
                self.bounce(letter, "Unavailable")
                return
            error = "NotFound" if status == "notfound" else "Unavailable"
            emit.attempt_failed(hub=self.router, delivery_id=letter.id, attempt=attempt,
                                error=error, timed_out=False)
            self.end_leg(leg, "failed")
            self.bounce(letter, error)
            return

    async def _on_call(self, caller: str, message: dict[str, Any]) -> None:
        letter = Letter.from_wire(message["letter"])
        answer = {"k": "result", "cid": message["cid"]}
        if letter.target not in self.hubs:
            self._reply(caller, {**answer, "status": "notfound"})
            return
        if (letter.id, message["attempt"]) in self.cluster.refuse:
            self._reply(caller, {**answer, "status": REFUSED})
            return
        # A call that reached this node is work it holds: the stop's final stage waits
        # for it to be taken up (`Cluster._stop`), however slow the callee.
        fault = await receiving(letter.target)
        if letter.target not in self.hubs:
            self._reply(caller, {**answer, "status": "notfound"})
            return
        emit.call_received(hub=letter.target, delivery_id=letter.id,
                           attempt=message["attempt"])
        if fault is not None:  # the reply is lost: the caller's own timeout ends its wait
            # (one response timeout after it sent the call), and the callee runs the call
            # only after that.
            settings = self.settings
            await asyncio.sleep((settings.response_timeout_ms + settings.retransmit_ms)
                                / 1000)
        hub = self.hubs.get(letter.target)
        if hub is None:
            return
        hub.offer(letter)
        if fault is None:
            self._reply(caller, {**answer, "status": "ok"})

    def _result(self, message: dict[str, Any]) -> None:
        call = self.calls.get(message["cid"])
        if call is not None and not call.reply.done():
            call.reply.set_result(message["status"])

    # Failure answers.

    def bounce(self, letter: Letter, error: str) -> None:
        if not warrants_reply(letter):
            emit.answer_suppressed(hub=self.router, delivery_id=letter.id,
                                   reason="may_answer_false", message_class=_cls(letter),
                                   packaged=letter.packaged)
            return
        if self.cluster.completed:
            emit.answer_suppressed(hub=self.router, delivery_id=letter.id,
                                   reason="silo_stopped", message_class=_cls(letter),
                                   packaged=letter.packaged)
            return
        slip = ReturnSlip(letter, error, self.new_id("a"))
        emit.failure_emitted(hub=self.router, delivery_id=slip.id, answers=letter.id,
                             error=error, sender=letter.target, target=letter.sender,
                             message_class=MessageClass.FAILURE, message_type=slip.body)
        leg = self.start_leg("nack", slip)
        leg.task = self._spawn(self._land_slip(leg))

    async def _land_slip(self, leg: Leg) -> None:
        await asyncio.sleep(0)
        hub = self.hubs.get(leg.letter.target)
        if hub is None:
            emit.answer_suppressed(hub=self.router, delivery_id=leg.letter.id,
                                   reason="sender_gone", message_class=MessageClass.FAILURE,
                                   packaged=leg.letter.packaged)
        else:
            hub.offer(leg.letter)
        leg.task = None
        self.end_leg(leg, "completed")

    # Subscriptions.

    def subscribe(self, sid: str, subscriber: str, target: str, retries: int) -> None:
        sub = Subscription(sid, subscriber, target, retries)
        self.subs[sid] = sub
        sub.task = self._spawn(self._subscription(sub))

    async def _subscription(self, sub: Subscription) -> None:
        settings = self.settings
        assert self.loop is not None
        for attempt in range(sub.retries + 1):
            sub.attempt = attempt
            rid = self.new_id("q")
            emit.subscribe_attempt(hub=sub.subscriber, subscription_id=sub.sid,
                                   attempt=attempt, target=sub.target, delivery_id=rid)
            sub.pending, sub.answer = rid, self.loop.create_future()
            self.dispatch(Letter(id=rid, sender=sub.subscriber, target=sub.target,
                                 body="SubscribeRequest", kind=SYSTEM, identity="system",
                                 sub_id=sub.sid), "monolith")
            try:
                outcome, why = await asyncio.wait_for(
                    sub.answer, settings.subscribe_timeout_ms / 1000)
            except TimeoutError:
                outcome, why = "failed", "timeout"
            sub.pending = None
            if not sub.open:  # ended with the cluster while it waited
                return
            if outcome == "answered":
                sub.open = False
                emit.subscribe_answered(hub=sub.subscriber, subscription_id=sub.sid,
                                        attempt=attempt)
                return
            if attempt == sub.retries:
                break
            await asyncio.sleep(settings.subscribe_backoff_ms * (2 ** attempt) / 1000)
            if not sub.open:
                return
        sub.open = False
        emit.subscribe_terminated(hub=sub.subscriber, subscription_id=sub.sid,
                                  attempt=sub.attempt, reason=f"retries_exhausted:{why}")

    def end_subscriptions(self) -> None:
        for sid in sorted(self.subs):
            sub = self.subs[sid]
            if sub.open:
                sub.open = False
                if sub.task is not None:
                    sub.task.cancel()
                emit.subscribe_terminated(hub=sub.subscriber, subscription_id=sub.sid,
                                          attempt=sub.attempt, reason="silo_stopped")

    def _sub_ok(self, message: dict[str, Any]) -> None:
        for sub in self.subs.values():
            if sub.pending == message["rid"] and sub.answer and not sub.answer.done():
                sub.answer.set_result(("answered", ""))

    # The wire.

    def _received(self, src: str, message: dict[str, Any]) -> None:
        kind = message["k"]
        if kind == "deliver":
            self._spawn(self._take_up(src, Letter.from_wire(message["letter"]),
                                      message["leg"]))
        elif kind == "landed":
            self._landed(message)
        elif kind == "call":
            if self.cluster.calls_closed:  # the stop's last stage: nothing is taken up now
                self._reply(message["reply_to"], {"k": "result", "cid": message["cid"],
                                                  "status": "unavailable"})
                return
            task = self._spawn(self._on_call(message["reply_to"], message))
            self.call_tasks.add(task)
            task.add_done_callback(self.call_tasks.discard)
        elif kind == "result":
            self._result(message)
        elif kind == "sub_ok":
            self._sub_ok(message)

    def _abandoned(self, peer: str, message: dict[str, Any]) -> None:
        """`message` was meant for a previous life of `peer`: it is lost with it."""
        self._peer_restarted(peer)

    def _peer_restarted(self, peer: str) -> None:
        for leg in sorted(self.legs.values(), key=lambda g: g.order):
            if leg.dest == peer and leg.kind == "route":
                if leg.out is not None and self.link is not None:
                    self.link.forget(leg.out)
                self.end_leg(leg, "failed")
                self.bounce(leg.letter, "Unavailable")
        for call in list(self.calls.values()):
            if call.dest == peer and not call.reply.done():
                call.reply.set_result("unavailable")
