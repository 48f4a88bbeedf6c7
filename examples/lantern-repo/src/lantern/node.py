"""A lantern node: its hubs, its router, its pooled links to peers and its subscriptions."""

from __future__ import annotations

import asyncio
from collections import deque
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from invariants.adapter import FaultKind
from invariants.aio import emit
from invariants.aio.points import receiving, sending, slowdown
from invariants.trace import MessageClass

from lantern.config import NOT_FOUND, REFUSED, SHUTTING_DOWN, TIMEOUT, UNAVAILABLE
from lantern.hub import Hub
from lantern.messages import FAILURE, MESH_IDENTITY, SYSTEM, DeliveryFailure, Envelope, envelope, may_answer
from lantern.wire import decode, encode

if TYPE_CHECKING:
    from lantern.cluster import Cluster

# A callee's reply status, as the caller reads it.
LANDED = "landed"
OK = "ok"
MISSING = "missing"
CLOSED = "closed"
_STATUS_ERRORS = MappingProxyType({MISSING: NOT_FOUND, CLOSED: SHUTTING_DOWN})


def is_resendable(error: str) -> bool:
    """A refusal (the callee holds nothing) may be sent again; a timeout never."""
    return error == REFUSED


class Link:
    """One pooled connection to a peer; replies are matched by correlation id."""

    def __init__(self, peer: str, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter) -> None:
        self.peer = peer
        self.reader = reader
        self.writer = writer
        self.cids: dict[str, None] = {}
        self.task: asyncio.Task[None] | None = None


class Subscription:
    def __init__(self, sid: str, subscriber: str, target: str, retries: int) -> None:
        self.id = sid
        self.subscriber = subscriber
        self.target = target
        self.retries = retries
        self.attempt = 0
        self.request: str | None = None
        self.outcome: asyncio.Future[tuple[str, str | None]] | None = None
        self.task: Any = None


class Node:
    def __init__(self, cluster: Cluster, name: str, incarnation: int) -> None:
        self.cluster = cluster
        self.name = name
        self.incarnation = incarnation
        self.router = f"router@{name}"
        self.hubs: dict[str, Hub] = {}
        self.pool: dict[str, Link] = {}
        self.pending: dict[str, asyncio.Future[str]] = {}
        self.subs: dict[str, Subscription] = {}
        self.finished: dict[str, str] = {}  # subscription id -> how it ended
        self.lanes: dict[tuple[str, str], tuple[deque[Envelope], asyncio.Lock]] = {}
        self.tasks: set[asyncio.Task[Any]] = set()
        self.server: asyncio.AbstractServer | None = None
        self.dead = False
        self._dial_locks: dict[str, asyncio.Lock] = {}
        self.start_task: Any = None
        self._local: dict[str, int] = {}

    def local_id(self, prefix: str) -> str:
        """An id numbered by this node alone."""
        n = self._local.get(prefix, 0) + 1
        self._local[prefix] = n
        return f"{prefix}{self.name}.{n}"

    # ---- life -------------------------------------------------------------------------
    async def start(self) -> None:
        host, port = self.cluster.listen_addr(self.name)
        self.server = await asyncio.start_server(self._serve, host, port)
        self.cluster.listening(self.name, self.server)

    def build_hub(self, name: str, watermark: int, threshold: int) -> Hub:
        hub = self.hubs[name] = Hub(self, name, watermark, threshold)
        if self.cluster.gates_closed:
            hub.gate_closed = True
        hub.pump_task = self.cluster.launch(self.name, hub.pump())
        return hub

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()
        for link in list(self.pool.values()):
            link.writer.close()
        for task in list(self.tasks):
            task.cancel()
        for hub in self.hubs.values():
            hub.close()

    # ---- the router: what leaves this node ----------------------------------------------
    def dispatch(self, env: Envelope, route: str) -> None:
        """Send a routed delivery (synchronous: the leg exists once this returns)."""
        c = self.cluster
        if c.stopping:
            emit.dispatch_refused(hub=self.router, delivery_id=env["id"], sender=env["snd"],
                                  target=env["tgt"], message_type=env["type"],
                                  message_class=MessageClass(env["cls"]),
                                  diagnostic_key=env["key"], packaged=True, error=SHUTTING_DOWN)
            self.answer(env, SHUTTING_DOWN)
            return
        env["pkg"] = True
        kind = "grain" if route == "grain" else "route"
        leg = c.start_leg(self, kind, env)
        target_node = c.directory.get(env["tgt"])
        if target_node is None:
            c.end_leg(leg, "failed")
            self.answer(env, NOT_FOUND)
            return
        if kind == "grain":
            c.launch(self.name, self._call(env, leg, target_node))
        else:
            c.launch(self.name, self._send(env, leg, target_node))

    def answer(self, env: Envelope, error: str) -> None:
        """Answer a delivery that failed, if it may be answered at all."""
        c = self.cluster
        if not may_answer(env):
            emit.answer_suppressed(hub=self.router, delivery_id=env["id"], reason="may_answer_false",
                                   message_class=MessageClass(env["cls"]), packaged=env["pkg"])
            return
        if c.stopped:
            emit.answer_suppressed(hub=self.router, delivery_id=env["id"], reason="silo_stopped")
            return
        answer_id = self.local_id("a") if c.bug("l03") else c.new_id("a")
        failure = DeliveryFailure(env, error, answer_id)
        emit.failure_emitted(hub=self.router, delivery_id=failure["id"], answers=env["id"],
                             error=error, sender=failure["snd"], target=failure["tgt"])
        hub = self.hubs.get(failure["tgt"])
        if hub is None:
            return  # the sender has gone: nobody to hand it to
        leg = c.start_leg(self, "nack", failure)
        hub.offer(failure)
        c.end_leg(leg, "completed")

    async def _send(self, env: Envelope, leg: str, target_node: str) -> None:
        c = self.cluster
        if self.dead or not c.leg_open(leg):
            return  # cut by the stop before it left
        try:
            async with asyncio.timeout(c.figures.response_timeout_ms / 1000):
                status = await self.call_peer(target_node, {"k": "deliver", "env": env})
        except TimeoutError:
            status = TIMEOUT
        except OSError:
            status = MISSING if c.bug("l02") else UNAVAILABLE
        if self.dead or not c.leg_open(leg):
            return
        if status == LANDED:
            c.end_leg(leg, "completed")
            return
        c.end_leg(leg, "failed")
        self.answer(env, _STATUS_ERRORS.get(status, status))

    async def _call(self, env: Envelope, leg: str, target_node: str) -> None:
        c = self.cluster
        fig = c.figures
        attempt = 0
        while True:
            if self.dead or not c.leg_open(leg):
                return  # cut by the stop before it left
            fault = sending(env["tgt"])
            if fault is not None and fault.kind == FaultKind.REMOVE_TARGET:
                c.end_leg(leg, "failed")
                self.answer(env, NOT_FOUND)
                return
            emit.attempt(hub=self.router, delivery_id=env["id"], target=env["tgt"], attempt=attempt,
                         sender=env["snd"], message_type=env["type"],
                         message_class=MessageClass(env["cls"]))
            frame = {"k": "call", "env": env, "att": attempt,
                     "refuse": fault is not None and fault.kind == FaultKind.REJECT_NEXT,
                     "hold_ms": fig.response_timeout_ms + 1}
            try:
                async with asyncio.timeout(fig.response_timeout_ms / 1000):
                    status = await self.call_peer(target_node, frame)
            except TimeoutError:
                # The callee may hold it: never sent again. The sender learns it failed.
                if not self.dead and c.leg_open(leg):
                    emit.attempt_failed(hub=self.router, delivery_id=env["id"], attempt=attempt,
                                        error=TIMEOUT, timed_out=True)
                    c.end_leg(leg, "failed")
                    self.answer(env, TIMEOUT)
                return
            except OSError:
                status = UNAVAILABLE
            if self.dead or not c.leg_open(leg):
                return
            if status == OK:
                c.end_leg(leg, "completed")
                return
            error = _STATUS_ERRORS.get(status, status)
            emit.attempt_failed(hub=self.router, delivery_id=env["id"], attempt=attempt, error=error,
                                timed_out=False)
            if is_resendable(error) and attempt < fig.call_retries:
                await asyncio.sleep(fig.retry_delay_ms(attempt + 1 if c.bug("l12") else attempt) / 1000)
                attempt += 1
                continue
            c.end_leg(leg, "failed")
            self.answer(env, UNAVAILABLE if error == REFUSED else error)
            return

    # ---- links: dialed lazily, pooled ---------------------------------------------------
    async def _link(self, peer: str) -> Link:
        link = self.pool.get(peer)
        if link is not None:
            return link
        lock = self._dial_locks.setdefault(peer, asyncio.Lock())
        async with lock:
            link = self.pool.get(peer)
            if link is not None:
                return link
            host, port = self.cluster.dial_addr(peer)
            reader, writer = await asyncio.open_connection(host, port)
            link = self.pool[peer] = Link(peer, reader, writer)
            link.task = asyncio.get_running_loop().create_task(self._read_replies(link))
            return link

    async def _read_replies(self, link: Link) -> None:
        try:
            while line := await link.reader.readline():
                frame = decode(line)
                fut = self.pending.get(frame["cid"])
                if fut is not None and not fut.done():
                    fut.set_result(frame["st"])
        except (OSError, ValueError):
            pass
        finally:
            if self.pool.get(link.peer) is link:
                del self.pool[link.peer]
            for cid in list(link.cids):
                fut = self.pending.get(cid)
                if fut is not None and not fut.done():
                    fut.set_exception(ConnectionResetError(f"link to {link.peer} lost"))
            link.writer.close()

    async def call_peer(self, peer: str, frame: dict[str, Any]) -> str:
        """One request frame to a peer and its reply status (no retry here)."""
        link = await self._link(peer)
        cid = self.cluster.new_id("c")
        fut: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self.pending[cid] = fut
        link.cids[cid] = None
        try:
            if link.writer.is_closing():
                raise ConnectionResetError(f"link to {peer} closing")
            link.writer.write(encode({**frame, "cid": cid}))
            return await fut
        finally:
            self.pending.pop(cid, None)
            link.cids.pop(cid, None)
            if fut.done() and not fut.cancelled():
                fut.exception()  # retrieved: a lost link is reported by the caller

    def send_oneway(self, peer: str, frame: dict[str, Any]) -> None:
        async def go() -> None:
            try:
                link = await self._link(peer)
                if not link.writer.is_closing():
                    link.writer.write(encode(frame))
            except OSError:
                pass
        self._spawn(go())

    # ---- the server: what arrives at this node -----------------------------------------
    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while line := await reader.readline():
                frame = decode(line)
                kind = frame["k"]
                if kind == "deliver":
                    self._spawn(self._land(frame, writer))
                elif kind == "call":
                    self._spawn(self._take_call(frame, writer))
                elif kind == "sub_answer":
                    self._on_sub_answer(frame)
        except (OSError, ValueError):
            pass
        except asyncio.CancelledError:
            return  # the node went down (or closed): the connection goes with it
        finally:
            writer.close()

    @staticmethod
    def _reply(writer: asyncio.StreamWriter, cid: str, status: str) -> None:
        if not writer.is_closing():
            writer.write(encode({"k": "ack", "cid": cid, "st": status}))

    async def _land(self, frame: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        env = frame["env"]
        await slowdown(env["tgt"])
        if self.cluster.stopped:
            return  # closed: nothing lands after the stop completed
        hub = self.hubs.get(env["tgt"])
        if hub is None:
            self._reply(writer, frame["cid"], MISSING)
            return
        if not hub.offer(env) and self.cluster.bug("l07") and env["ident"] is None:
            self._reply(writer, frame["cid"], "Unauthorized")
            return
        self._reply(writer, frame["cid"], LANDED)

    async def _take_call(self, frame: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        env = frame["env"]
        if frame["refuse"]:
            self._reply(writer, frame["cid"], REFUSED)
            return
        fault = await receiving(env["tgt"])
        if self.cluster.stopped:
            return
        hub = self.hubs.get(env["tgt"])
        if hub is None:
            self._reply(writer, frame["cid"], MISSING)
            return
        emit.call_received(hub=env["tgt"], delivery_id=env["id"], attempt=frame["att"])
        if fault is not None:
            # The reply is lost; the caller gives up at its timeout, and the callee still
            # runs what it accepted, once the caller has stopped waiting.
            await asyncio.sleep(frame["hold_ms"] / 1000)
            hub = self.hubs.get(env["tgt"])
            if hub is not None and not self.cluster.stopped:
                hub.offer(env)
            return
        hub.offer(env)
        self._reply(writer, frame["cid"], OK)

    # ---- direct posts: straight onto a hub's intake, in each sender's order -------------
    def lane(self, sender: str, target: str) -> tuple[deque[Envelope], asyncio.Lock]:
        lane = self.lanes.get((sender, target))
        if lane is None:
            lane = self.lanes[(sender, target)] = (deque(), asyncio.Lock())
        return lane

    async def take_own(self, env: Envelope) -> None:
        await slowdown(env["tgt"])
        hub = self.hubs.get(env["tgt"])
        if hub is not None:
            hub.offer(env)
            return
        self.cluster.answer_from_sender(env, NOT_FOUND)

    async def take_direct(self, sender: str, target: str) -> None:
        queue, lock = self.lane(sender, target)
        async with lock:
            env = queue.popleft()
            await slowdown(target)
            hub = self.hubs.get(target)
            if hub is not None:
                hub.offer(env)
                return
        self.cluster.answer_from_sender(env, NOT_FOUND)

    # ---- hubs' handlers -----------------------------------------------------------------
    def on_handled(self, hub: Hub, env: Envelope) -> None:
        if env["type"] == "Subscribe" and env["sub"] is not None:
            home = self.cluster.directory.get(env["snd"])
            if home is not None and not self.cluster.stopped:
                self.send_oneway(home, {"k": "sub_answer", "sub": env["sub"], "req": env["id"]})
        elif env["cls"] == FAILURE and env["ans"] is not None:
            for sub in self.subs.values():
                if sub.request == env["ans"] and sub.outcome is not None and not sub.outcome.done():
                    sub.outcome.set_result(("failed", env["err"]))

    # ---- subscriptions ------------------------------------------------------------------
    def open_subscription(self, sid: str, owner: str, target: str, retries: int) -> None:
        sub = self.subs[sid] = Subscription(sid, owner, target, retries)
        sub.task = self.cluster.launch(self.name, self._subscription(sub))

    def _on_sub_answer(self, frame: dict[str, Any]) -> None:
        sub = self.subs.get(frame["sub"])
        if sub is not None and sub.request == frame["req"] and sub.outcome is not None \
                and not sub.outcome.done():
            sub.outcome.set_result(("answered", None))

    async def _subscription(self, sub: Subscription) -> None:
        c = self.cluster
        fig = c.figures
        last = "timeout"
        for attempt in range(sub.retries + 1):
            if attempt:
                delay = fig.subscribe_backoff_ms if c.bug("l08") else fig.resubscribe_delay_ms(attempt)
                await asyncio.sleep(delay / 1000)
            request = envelope(c.new_id("r"), sub.subscriber, sub.target, "Subscribe", SYSTEM,
                               identity=MESH_IDENTITY, sub=sub.id)
            sub.attempt, sub.request = attempt, request["id"]
            sub.outcome = asyncio.get_running_loop().create_future()
            emit.subscribe_attempt(hub=sub.subscriber, subscription_id=sub.id, attempt=attempt,
                                   target=sub.target, delivery_id=request["id"])
            self.dispatch(request, "monolith")
            try:
                async with asyncio.timeout(fig.subscribe_timeout_ms / 1000):
                    result, error = await sub.outcome
            except TimeoutError:
                result, error = "failed", "timeout"
            sub.request = None
            if result == "answered":
                self.subs.pop(sub.id, None)
                self.finished[sub.id] = "answered"
                emit.subscribe_answered(hub=sub.subscriber, subscription_id=sub.id, attempt=attempt)
                return
            last = error or "timeout"
        self.subs.pop(sub.id, None)
        self.finished[sub.id] = f"retries_exhausted:{last}"
        emit.subscribe_terminated(hub=sub.subscriber, subscription_id=sub.id, attempt=sub.retries,
                                  reason=f"retries_exhausted:{last}")

    def end_subscriptions(self) -> None:
        """The stop completed: every open subscription ends with it."""
        for sub in list(self.subs.values()):
            if sub.task is not None:
                sub.task.cancel()
            self.finished[sub.id] = "silo_stopped"
            emit.subscribe_terminated(hub=sub.subscriber, subscription_id=sub.id,
                                      attempt=sub.attempt, reason="silo_stopped")
        self.subs.clear()
