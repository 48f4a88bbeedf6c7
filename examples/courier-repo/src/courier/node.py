"""One courier node: its hubs, its server, its links to the other nodes.

Requests go out on this node's own link to a peer; the peer answers on its own link back
(a `got` receipt at once for a call, then a `reply`), matched by correlation id.
"""
from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from courier.config import Config
from courier.notices import Parcel, Returned, may_return
from courier.wire import pack, read_frame
from invariants.adapter import FaultKind
from invariants.aio import emit
from invariants.aio.points import removed, slowdown, turn
from invariants.trace import MessageClass

APP_KINDS = frozenset({"user", "ignorable"})


class LinkLost(Exception):
    """The connection to a peer failed."""


class Hub:
    """An actor: its mail, one parcel at a time."""

    def __init__(self, node: Node, name: str, watermark: int) -> None:
        self.node, self.name, self.watermark = node, name, watermark
        self.queue: asyncio.Queue[Parcel] = asyncio.Queue()
        self.gate_closed = False
        self.handled: list[str] = []
        self.task: asyncio.Task[None] | None = None
        self.in_hand = 0   # taken off the queue by the pump, not yet handled

    def start(self) -> None:
        """Start the pump, once: a hub has one pump (two would take two parcels at a time)."""
        if self.task is not None:
            return
        self.task = asyncio.get_running_loop().create_task(self._pump(), name=f"hub {self.name}")

    def depth(self) -> int:
        """The hub's backlog: what is queued and what the pump holds, not yet handled."""
        return self.queue.qsize() + self.in_hand

    def offer(self, p: Parcel) -> str:
        """The intake: one verdict per offer."""
        emit.posted(hub=self.name, delivery_id=p.id, sender=p.sender, target=p.target,
                    message_type=p.type, message_class=MessageClass(p.kind), diagnostic_key=p.key,
                    packaged=p.packaged, subscription_id=p.sub)
        depth = self.depth()
        if self.gate_closed and p.kind in APP_KINDS:
            emit.gated(hub=self.name, delivery_id=p.id)
            return "gated"
        if p.identity is None and p.kind != "system":
            emit.rejected(hub=self.name, delivery_id=p.id, error="NoIdentity")
            return "rejected"
        shed_kinds = {"ignorable", "user"} if self.node.cfg.bug("c04") else {"ignorable"}
        if p.kind in shed_kinds and depth >= self.watermark:
            emit.shed(hub=self.name, delivery_id=p.id, depth=depth, watermark=self.watermark,
                      error="Ignored")
            return "shed"
        self.queue.put_nowait(p)
        emit.enqueued(hub=self.name, delivery_id=p.id, depth=depth + 1)
        return "enqueued"

    async def _pump(self) -> None:
        while True:
            p = await self.queue.get()
            self.in_hand += 1
            try:
                await turn(self.name)
                self.handled.append(p.id)
                emit.handled(hub=self.name, delivery_id=p.id, message_type=p.type)
            finally:
                self.in_hand -= 1


class Leg:
    def __init__(self, leg_id: str, kind: str, parcel_id: str, order: int) -> None:
        self.id, self.kind, self.parcel_id, self.order = leg_id, kind, parcel_id, order
        self.task: asyncio.Task[Any] | None = None
        self.cut = False
        self.receipt = False   # the peer said it got the request


class Node:
    def __init__(self, name: str, cfg: Config, cluster: Any, epoch: int = 0) -> None:
        self.name, self.cfg, self.cluster, self.epoch = name, cfg, cluster, epoch
        self.hubs: dict[str, Hub] = {}
        self.links: dict[str, asyncio.StreamWriter] = {}
        self.connecting: dict[str, asyncio.Future[asyncio.StreamWriter]] = {}
        self.pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.receipts: dict[str, Leg] = {}
        self.server: asyncio.AbstractServer | None = None
        self.counter = 0
        self.tasks: set[asyncio.Task[Any]] = set()
        self.subs: dict[str, asyncio.Task[Any]] = {}
        self.direct_next: dict[tuple[str, str], int] = {}
        self.direct_waiters: dict[tuple[str, str], dict[int, asyncio.Future[None]]] = {}
        self.stopping = False
        self.stopped = False

    # ids: the node's name and incarnation, so a rebuilt node never reuses one
    def new_id(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.name}.{self.epoch}.{self.counter}"

    def spawn(self, coro: Any, name: str | None = None) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    # -- serving ---------------------------------------------------------------------
    async def start(self) -> None:
        host, port = self.cluster.address(self.name)
        self.server = await asyncio.start_server(self._serve, host, port)
        for hub in self.hubs.values():
            hub.start()
        for peer in self.cluster.peers(self.name):
            if self.epoch:
                self.spawn(self._hello(peer))

    async def _hello(self, peer: str) -> None:
        with contextlib.suppress(LinkLost):
            await self.send(peer, {"op": "hello", "from": self.name, "epoch": self.epoch})

    def add_hub(self, name: str, watermark: int | None) -> Hub:
        hub = Hub(self, name, self.cfg.watermark if watermark is None else watermark)
        self.hubs[name] = hub
        return hub

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while (frame := await read_frame(reader)) is not None:
                op = frame["op"]
                if op == "reply":
                    fut = self.pending.pop(frame["cid"], None)
                    if fut is not None and not fut.done():
                        fut.set_result(frame)
                    elif fut is None:
                        self._late_reply(frame)
                elif op == "got":
                    leg = self.receipts.get(frame["cid"])
                    if leg is not None:
                        leg.receipt = True
                elif op == "hello":
                    old = self.links.pop(frame["from"], None)
                    if old is not None:
                        old.close()
                elif not self.stopped:
                    self.spawn(self._request(frame))
        except (ConnectionError, OSError, asyncio.CancelledError):
            pass  # the peer went away, or this node is going down
        finally:
            writer.close()

    async def _request(self, frame: dict[str, Any]) -> None:
        p = Parcel.from_wire(frame["parcel"])
        peer, cid = frame["from"], frame["cid"]
        try:
            await self.send(peer, {"op": "got", "cid": cid})
        except LinkLost:
            return
        if frame["op"] == "call":
            answer = await self._take_call(p, frame["attempt"])
        else:
            answer = await self._take_relay(p)
        if answer is None:
            return
        with contextlib.suppress(LinkLost):
            await self.send(peer, {"op": "reply", "cid": cid, **answer})

    async def _take_relay(self, p: Parcel) -> dict[str, Any] | None:
        await slowdown(p.target)
        if self.stopped:
            return None
        hub = self.hubs.get(p.target)
        if hub is None or removed(p.target):
            return {"ok": False, "error": "NotFound"}
        return {"ok": True, "verdict": hub.offer(p)}

    async def _take_call(self, p: Parcel, attempt: int) -> dict[str, Any] | None:
        """The callee takes a call up. The call has left its caller (whose response timeout
        runs); a slow callee makes it wait here, so a call slowed past its caller's timeout
        is still taken up, once, late. An armed timeout is spent by the call taken up."""
        hub = self.hubs.get(p.target)
        if hub is None or removed(p.target):
            return {"ok": False, "error": "NotFound"}
        await slowdown(p.target)
        if removed(p.target):
            return {"ok": False, "error": "NotFound"}
        if self.stopping:
            return {"ok": False, "error": "ShuttingDown"}
        book = self.cluster.fault_book
        lost = book is not None and (book.take(FaultKind.AGGREGATE_NEXT, p.target)
                                     or book.take(FaultKind.TIMEOUT_NEXT, p.target))
        emit.call_received(hub=p.target, delivery_id=p.id, attempt=attempt)
        if lost:  # the reply is lost: the work runs once the caller gave up
            await asyncio.sleep((self.cfg.response_timeout_ms + 1) / 1000)
            if not self.stopped:
                hub.offer(p)
            return None
        return {"ok": True, "verdict": hub.offer(p)}

    # -- direct drops: one sender's parcels to one hub taken in the order sent -----------
    async def deliver_direct(self, p: Parcel, n: int) -> None:
        key = (p.sender, p.target)
        if not self.cfg.bug("c11") and self.direct_next.get(key, 0) < n:
            # wait for our turn: the one before us wakes exactly us (one waiter per number)
            waiter = asyncio.get_running_loop().create_future()
            self.direct_waiters.setdefault(key, {})[n] = waiter
            try:
                await waiter
            finally:
                self.direct_waiters.get(key, {}).pop(n, None)
        try:
            await slowdown(p.target)
            hub = self.hubs.get(p.target)
            if hub is None or removed(p.target):
                home = self.cluster.nodes[self.cluster.node_of(p.sender) or self.name]
                await home.give_back(p, "NotFound")
            else:
                hub.offer(p)
        finally:
            nxt = max(self.direct_next.get(key, 0), n + 1)
            self.direct_next[key] = nxt
            waiter = self.direct_waiters.get(key, {}).pop(nxt, None)
            if waiter is not None and not waiter.done():
                waiter.set_result(None)

    # -- links -----------------------------------------------------------------------
    async def send(self, peer: str, frame: dict[str, Any]) -> None:
        writer = self.links.get(peer)
        try:
            if writer is None or writer.is_closing():
                writer = await self._connect(peer)
            writer.write(pack(frame))
            await writer.drain()
        except (ConnectionError, OSError) as exc:
            if self.links.get(peer) is writer:
                self.links.pop(peer, None)
            raise LinkLost(str(exc)) from None

    async def _connect(self, peer: str) -> asyncio.StreamWriter:
        """The one link to `peer`: senders that find it down while it is being opened wait
        for that connection rather than each opening one of their own."""
        opening = self.connecting.get(peer)
        if opening is None:
            opening = asyncio.ensure_future(self._open(peer))
            self.connecting[peer] = opening
            opening.add_done_callback(lambda _f: self.connecting.pop(peer, None))
        return await asyncio.shield(opening)

    async def _open(self, peer: str) -> asyncio.StreamWriter:
        host, port = self.cluster.address(peer)
        _, writer = await asyncio.open_connection(host, port)
        self.links[peer] = writer
        return writer

    async def request(self, peer: str, frame: dict[str, Any], leg: Leg,
                      timeout_ms: int) -> dict[str, Any]:
        cid = self.new_id("c")
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[cid] = fut
        self.receipts[cid] = leg
        self.cluster.late_ok[cid] = frame
        try:
            async with asyncio.timeout(timeout_ms / 1000):
                await self.send(peer, {**frame, "cid": cid, "from": self.name})
                return await fut
        finally:
            self.receipts.pop(cid, None)
            if self.pending.pop(cid, None) is None:
                self.cluster.late_ok.pop(cid, None)

    def _late_reply(self, frame: dict[str, Any]) -> None:
        """A reply to a request the caller gave up on: nothing more is owed."""
        request = self.cluster.late_ok.pop(frame["cid"], None)
        if request is None:
            return
        p = Parcel.from_wire(request["parcel"])
        sub = self.cluster.late_subs.pop(p.id, None)
        if sub is not None and frame.get("ok") and self.cfg.bug("c07"):
            sub(frame)
        if self.cfg.bug("c10") and not frame.get("ok"):
            self.spawn(self.give_back(p, frame["error"]))
        if self.cfg.bug("c09") and frame.get("verdict") == "rejected":
            self.spawn(self.give_back(p, "Refused"))

    # -- legs ------------------------------------------------------------------------
    def open_leg(self, kind: str, p: Parcel) -> Leg:
        leg = self.cluster.open_leg(self, kind, p)
        emit.leg_started(hub=self.name, leg_id=leg.id, leg_kind=kind, delivery_id=p.id,
                         depth=self.cluster.in_flight(), sender=p.sender, target=p.target,
                         message_type=p.type, message_class=MessageClass(p.kind),
                         packaged=p.packaged,
                         subscription_id=p.sub)
        return leg

    def close_leg(self, leg: Leg, reason: str) -> None:
        if leg.cut or not self.cluster.close_leg(leg):
            return
        emit.leg_ended(hub=self.name, leg_id=leg.id, leg_kind=leg.kind,
                       delivery_id=leg.parcel_id, depth=self.cluster.in_flight(), reason=reason)

    def refuse(self, p: Parcel) -> None:
        emit.dispatch_refused(hub=self.name, delivery_id=p.id, sender=p.sender, target=p.target,
                              message_type=p.type, message_class=MessageClass(p.kind),
                              diagnostic_key=p.key, packaged=p.packaged, error="ShuttingDown")

    # -- routing ---------------------------------------------------------------------
    async def route(self, p: Parcel) -> tuple[bool, str]:
        """Carry `p` to its target's intake: (True, verdict) or (False, error)."""
        p.packaged = True
        if self.stopping:
            self.refuse(p)
            await self.give_back(p, "ShuttingDown")
            return False, "ShuttingDown"
        leg = self.open_leg("route", p)
        leg.task = asyncio.current_task()
        ok, what = await self._carry(p, leg)
        if ok and what == "rejected" and self.cfg.bug("c01"):
            ok, what = False, "Refused"
        if ok:
            self.close_leg(leg, "completed")
            return True, what
        if leg.cut:
            return False, what
        self.close_leg(leg, "failed")
        await self.give_back(p, what)
        return False, what

    async def _carry(self, p: Parcel, leg: Leg) -> tuple[bool, str]:
        where = self.cluster.node_of(p.target)
        if where is None:
            if self.cfg.bug("c05"):
                return True, "enqueued"
            return False, "NotFound"
        if where == self.name:  # a local hub: the router waits for it no longer than a peer
            try:
                async with asyncio.timeout(self.cfg.response_timeout_ms / 1000):
                    await slowdown(p.target)
            except TimeoutError:
                return False, "TimedOut"
            hub = self.hubs.get(p.target)
            if hub is None or removed(p.target):
                return False, "NotFound"
            return True, hub.offer(p)
        try:
            reply = await self.request(where, {"op": "relay", "parcel": p.to_wire()}, leg,
                                       self.cfg.response_timeout_ms)
        except TimeoutError:
            return False, "TimedOut"
        except LinkLost:
            return False, "Unreachable"
        if reply["ok"]:
            return True, reply["verdict"]
        return False, reply["error"]

    async def call(self, p: Parcel) -> None:
        """A request/response call to the target, re-sent while the callee refuses it."""
        p.packaged = True
        if self.stopping:
            self.refuse(p)
            await self.give_back(p, "ShuttingDown")
            return
        leg = self.open_leg("grain", p)
        leg.task = asyncio.current_task()
        attempt, error = 0, "NotFound"
        while True:
            emit.attempt(hub=self.name, delivery_id=p.id, target=p.target, attempt=attempt,
                         sender=p.sender, message_type=p.type, message_class=MessageClass(p.kind))
            where = self.cluster.node_of(p.target)
            book = self.cluster.fault_book
            if where is None or removed(p.target):
                error, refused, timed_out = "NotFound", False, False
            elif book is not None and book.take(FaultKind.REJECT_NEXT, p.target) is not None:
                # refused at the callee's door: it never takes the call up
                error, refused, timed_out = "Refused", True, False
            else:
                leg.receipt = False
                try:
                    reply = await self.request(
                        where, {"op": "call", "parcel": p.to_wire(), "attempt": attempt},
                        leg, self.cfg.response_timeout_ms)
                except TimeoutError:
                    error, refused, timed_out = "TimedOut", False, True
                    if self.cfg.bug("c06") and not leg.receipt:
                        error, refused, timed_out = "Refused", True, False
                except LinkLost:
                    error, refused, timed_out = "Unreachable", False, False
                else:
                    if reply["ok"]:
                        self.close_leg(leg, "completed")
                        return
                    error, timed_out = reply["error"], False
                    refused = error == "Refused"
            emit.attempt_failed(hub=self.name, delivery_id=p.id, attempt=attempt, error=error,
                                timed_out=timed_out)
            if refused and attempt < self.cfg.call_retries:
                await asyncio.sleep(self.cfg.retry_delay_ms(attempt) / 1000)
                attempt += 1
                continue
            break
        if leg.cut:
            return
        self.close_leg(leg, "failed")
        await self.give_back(p, error)

    async def give_back(self, p: Parcel, error: str) -> None:
        """Send `p`'s sender a Returned notice, when it is owed one."""
        if not may_return(p):
            emit.answer_suppressed(hub=self.name, delivery_id=p.id, reason="may_answer_false",
                                   message_class=MessageClass(p.kind), packaged=p.packaged)
            return
        if self.cluster.stop_done:
            emit.answer_suppressed(hub=self.name, delivery_id=p.id, reason="silo_stopped")
            return
        notice = Returned(p, error)
        rid = self.new_id("r")
        emit.failure_emitted(hub=self.name, delivery_id=rid, answers=p.id, error=error,
                             sender=p.target, target=p.sender, message_type="Returned",
                             message_class=MessageClass.FAILURE)
        await self.carry_notice(rid, notice)

    async def carry_notice(self, rid: str, notice: Returned) -> None:
        p = notice.parcel
        back = Parcel(rid, sender=p.target, target=p.sender, type="Returned", kind="failure",
                      identity="courier", error=notice.error, answers=p.id)
        leg = self.open_leg("nack", back)
        leg.task = asyncio.current_task()
        self.cluster.notices[p.id] = notice
        hub = self.hubs.get(p.sender)
        if hub is not None:
            hub.offer(back)
        else:
            emit.answer_suppressed(hub=self.name, delivery_id=rid, reason="may_answer_false",
                                   message_class=MessageClass.FAILURE, packaged=False)
        self.close_leg(leg, "completed")

    # -- subscriptions -------------------------------------------------------------------
    async def subscribe(self, sid: str, subscriber: str, target: str, retries: int) -> None:
        """Subscribe `subscriber` to `target`: up to `retries` re-tries, each after its backoff.
        The subscription is open in the cluster's record (`open_subscription`) until exactly
        one end: answered, terminated here, or ended by the stop or a crash of this node."""
        cfg, cluster = self.cfg, self.cluster
        tries = retries + 2 if cfg.bug("c02") else retries + 1
        error = "timeout"
        try:
            waited = False
            for attempt in range(tries):
                if attempt and not waited:
                    await asyncio.sleep(cfg.sub_backoff_ms * 2 ** (attempt - 1) / 1000)
                waited = False
                if not cluster.subscription_attempt(sid, attempt):
                    return  # ended meanwhile (the stop)
                rid = self.new_id("q")
                emit.subscribe_attempt(hub=subscriber, subscription_id=sid, attempt=attempt,
                                       target=target, delivery_id=rid)
                p = Parcel(rid, sender=subscriber, target=target, type="Subscribe",
                           kind="system", identity="courier", sub=sid)
                answered = asyncio.get_running_loop().create_future()

                def late(frame: dict[str, Any], answered: asyncio.Future[Any] = answered,
                         attempt: int = attempt) -> None:
                    if not answered.done():
                        answered.set_result(attempt)
                cluster.late_subs[rid] = late
                try_task = self.spawn(self.route(p))
                done, _ = await asyncio.wait({try_task}, timeout=cfg.sub_timeout_ms / 1000)
                if try_task in done:
                    cluster.late_subs.pop(rid, None)
                    ok, what = try_task.result()
                    if ok and what == "enqueued":
                        if cluster.close_subscription(sid):
                            emit.subscribe_answered(hub=subscriber, subscription_id=sid,
                                                    attempt=attempt)
                        return
                    error = what
                    continue
                error = "timeout"
                if cfg.bug("c07"):
                    try:
                        got = await asyncio.wait_for(
                            asyncio.shield(answered),
                            cfg.sub_backoff_ms * 2 ** attempt / 1000)
                    except TimeoutError:
                        waited = True
                    else:
                        if cluster.close_subscription(sid):
                            emit.subscribe_answered(hub=subscriber, subscription_id=sid,
                                                    attempt=got)
                        return
            cluster.end_subscription(sid, tries - 1, f"retries_exhausted:{error}")
        except asyncio.CancelledError:
            if cluster.stop_asked:
                cluster.end_subscription(sid, None, "silo_stopped")
            raise
        finally:
            self.subs.pop(sid, None)
