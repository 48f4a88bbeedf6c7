"""A node: its hubs, its one broker connection, the router (legs), calls and subscriptions."""
from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from invariants.adapter import FaultKind
from invariants.aio import emit, points

from . import config
from .hub import CLASSES, Hub
from .messages import USER, Delivery, FailureNotice, may_answer
from .wire import encode, read_frame

if TYPE_CHECKING:
    from .cluster import Cluster

ROUTER = "ferry"


@dataclass
class Leg:
    id: str
    kind: str
    delivery: Delivery
    order: int
    timer: asyncio.TimerHandle | None = None
    task: asyncio.Task | None = None
    resent: bool = False


@dataclass
class Subscription:
    id: str
    subscriber: str
    target: str
    retries: int
    attempt: int = 0
    request: str | None = None
    timed_out: bool = False
    closed: bool = False
    timer: asyncio.TimerHandle | None = None
    requests: dict[str, int] = field(default_factory=dict)


def is_resendable(status: str) -> bool:
    """A refused call holds nothing at the callee and may be sent again; a timed-out one may not."""
    return status == "rejected"


class Node:
    def __init__(self, cluster: Cluster, name: str, epoch: int) -> None:
        self.cluster = cluster
        self.settings = cluster.settings
        self.name = name
        self.epoch = epoch
        self.hubs: dict[str, Hub] = {}
        self.legs: dict[str, Leg] = {}
        self.subs: dict[str, Subscription] = {}
        self.sub_by_request: dict[str, Subscription] = {}
        self.calls: dict[tuple[str, int], asyncio.Future[str]] = {}
        self.received_calls: set[str] = set()
        self.answered: set[str] = set()
        self.outbox: deque[bytes] = deque()
        self.writer: asyncio.StreamWriter | None = None
        self.dead = False
        self.tasks: set[asyncio.Task] = set()
        self._ids = 0
        # A node built while a stop runs must refuse dispatches like the others.
        self.accepting = True if self.settings.bug("f04") else not cluster.stop_asked

    # ----- ids, tasks -------------------------------------------------------------------
    def next_id(self, prefix: str) -> str:
        self._ids += 1
        return f"{prefix}.{self.name}.{self.epoch}.{self._ids}"

    def start(self, coro: Any) -> asyncio.Task:
        task = asyncio.get_running_loop().create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    # ----- the broker connection --------------------------------------------------------
    async def run(self) -> None:
        """Keep one connection to the broker, reconnecting with backoff when it dies."""
        delay = config.RECONNECT_BASE_MS
        while not self.dead:
            try:
                reader, writer = await asyncio.open_connection(
                    self.settings.broker_host, self.settings.broker_port)
            except OSError:
                await asyncio.sleep(delay / 1000)
                delay = min(delay * 2, config.RECONNECT_CAP_MS)
                continue
            delay = config.RECONNECT_BASE_MS
            writer.write(encode({"op": "hello", "node": self.name}))
            self.writer = writer
            while self.outbox:
                writer.write(self.outbox.popleft())
            try:
                while (frame := await read_frame(reader)) is not None:
                    self.on_frame(frame)
            except (ConnectionError, OSError, ValueError):
                pass
            finally:
                if self.writer is writer:
                    self.writer = None
                writer.close()
            await asyncio.sleep(delay / 1000)

    def send(self, to: str, body: dict[str, Any]) -> None:
        data = encode({"op": "fwd", "to": to, "from": self.name, "body": body})
        if self.writer is None or self.writer.is_closing():
            self.outbox.append(data)
            return
        try:
            self.writer.write(data)
        except (ConnectionError, OSError, RuntimeError):
            self.outbox.append(data)

    def on_frame(self, frame: dict[str, Any]) -> None:
        if frame.get("op") != "fwd" or self.dead:
            return
        body, origin = frame["body"], frame["from"]
        op = body["op"]
        if op == "deliver":
            self._on_deliver(origin, body)
        elif op == "ack":
            self._on_ack(body)
        elif op == "call":
            self._on_call(origin, body)
        elif op == "result":
            fut = self.calls.get((body["id"], body["attempt"]))
            if fut is not None and not fut.done():
                fut.set_result(body["status"])
        elif op == "subreq":
            status = "subscribed" if body["target"] in self.hubs else "not_found"
            self.send(origin, {"op": "ack", "leg": body["leg"], "status": status})

    # ----- hubs -------------------------------------------------------------------------
    def make_hub(self, address: str, watermark: int, threshold: int) -> Hub:
        hub = Hub(self, address, watermark, threshold)
        if self.cluster.gates_closed:
            hub.gate_open = False
        self.hubs[address] = hub
        emit.hub_created(hub=address, watermark=watermark)
        hub.pump_task = self.cluster.on_host(self.name, hub.pump())
        return hub

    def remove_hub(self, address: str) -> None:
        hub = self.hubs.pop(address, None)
        if hub is not None and hub.pump_task is not None:
            hub.pump_task.cancel()

    # ----- legs -------------------------------------------------------------------------
    def start_leg(self, kind: str, d: Delivery) -> Leg:
        leg = Leg(self.next_id("L"), kind, d, self.cluster.next_order())
        self.legs[leg.id] = leg
        emit.leg_started(hub=ROUTER, leg_id=leg.id, leg_kind=kind, delivery_id=d.id,
                         depth=self.cluster.legs_in_flight(), sender=d.sender, target=d.target,
                         message_type=d.type, message_class=CLASSES[d.cls], packaged=True,
                         subscription_id=d.subscription)
        return leg

    def end_leg(self, leg: Leg, reason: str) -> None:
        if self.legs.pop(leg.id, None) is None:
            return
        if leg.timer is not None:
            leg.timer.cancel()
        emit.leg_ended(hub=ROUTER, leg_id=leg.id, leg_kind=leg.kind, delivery_id=leg.delivery.id,
                       depth=self.cluster.legs_in_flight(), reason=reason)
        self.cluster.leg_ended()

    def drain(self) -> None:
        """The stop's last stage: every leg still in flight is cut."""
        for leg in sorted(self.legs.values(), key=lambda x: x.order):
            if leg.task is not None:
                leg.task.cancel()
            self.end_leg(leg, "drained")

    # ----- answers ----------------------------------------------------------------------
    def answer(self, d: Delivery, error: str) -> None:
        """Answer a delivery whose routing failed, once, when the envelope allows it."""
        if self.cluster.completed:
            emit.answer_suppressed(hub=ROUTER, delivery_id=d.id, reason="silo_stopped")
            return
        if not may_answer(d):
            emit.answer_suppressed(hub=ROUTER, delivery_id=d.id, reason="may_answer_false",
                                   message_class=CLASSES[d.cls], packaged=d.packaged)
            return
        if d.id in self.answered:
            emit.answer_suppressed(hub=ROUTER, delivery_id=d.id, reason="already_answered")
            return
        self.answered.add(d.id)
        notice = FailureNotice(d, error, self.next_id("a"))
        emit.failure_emitted(hub=ROUTER, delivery_id=notice.id, answers=d.id, error=error,
                             sender=d.target, target=d.sender)
        leg = self.start_leg("nack", notice)
        hub = self.hubs.get(d.sender)
        if hub is not None:
            hub.offer(notice)
        else:
            emit.answer_suppressed(hub=ROUTER, delivery_id=notice.id, reason="sender_gone")
        self.end_leg(leg, "completed")

    def failure_handled(self, notice: Delivery) -> None:
        sub = self.sub_by_request.get(notice.answers or "")
        if sub is not None:
            self._sub_failed(sub, notice.answers or "", "NotFound")

    # ----- routed posts -----------------------------------------------------------------
    def refuse(self, d: Delivery) -> None:
        emit.dispatch_refused(hub=ROUTER, delivery_id=d.id, sender=d.sender, target=d.target,
                              message_type=d.type, message_class=CLASSES[d.cls],
                              diagnostic_key=d.key, packaged=True, error="ShuttingDown")
        self.answer(d, "ShuttingDown")

    def accept(self, d: Delivery, kind: str) -> Leg | None:
        """The router takes a post in hand as it is made: a leg, or a refusal once stopping."""
        if not self.accepting:
            self.refuse(d)
            return None
        return self.start_leg(kind, d)

    async def dispatch(self, leg: Leg) -> None:
        if leg.id in self.legs:
            self._send_leg(leg, "deliver")

    def _send_leg(self, leg: Leg, op: str) -> None:
        d = leg.delivery
        self.send(self.cluster.node_for(d.target), {"op": op, "leg": leg.id, "target": d.target,
                                                     "d": d.to_wire()})
        leg.timer = asyncio.get_running_loop().call_later(
            config.RESPONSE_TIMEOUT_MS / 1000, self._leg_timed_out, leg.id, op)

    def _leg_timed_out(self, leg_id: str, op: str) -> None:
        leg = self.legs.get(leg_id)
        if leg is None:
            return
        if self.settings.bug("f05") and not leg.resent and op == "deliver":
            leg.resent = True          # one more try over the link before giving up
            self._send_leg(leg, op)
            return
        self.end_leg(leg, "failed")
        self.answer(leg.delivery, "Unreachable")

    def _on_ack(self, body: dict[str, Any]) -> None:
        leg = self.legs.get(body["leg"])
        if leg is None:
            return
        status = body["status"]
        d = leg.delivery
        if status in ("landed", "subscribed"):
            self.end_leg(leg, "completed")
            if status == "subscribed" and d.subscription is not None:
                sub = self.sub_by_request.get(d.id)
                if sub is not None:
                    self._sub_answered(sub, d.id)
        else:
            self.end_leg(leg, "failed")
            self.answer(d, "NotFound")

    def _on_deliver(self, origin: str, body: dict[str, Any]) -> None:
        if self.cluster.completed:
            return
        target = body["target"]
        if target not in self.hubs:
            self.send(origin, {"op": "ack", "leg": body["leg"], "status": "not_found"})
            return
        self.send(origin, {"op": "ack", "leg": body["leg"], "status": "landed"})
        self.start(self._land(Delivery.from_wire(body["d"])))

    async def _land(self, d: Delivery) -> None:
        await points.slowdown(d.target)
        hub = self.hubs.get(d.target)
        if hub is not None and not self.cluster.completed:
            hub.offer(d)

    # ----- grain calls ------------------------------------------------------------------
    async def call(self, leg: Leg) -> None:
        if leg.id not in self.legs:
            return
        d = leg.delivery
        leg.task = asyncio.current_task()
        error = "Refused"
        for attempt in range(config.CALL_RETRIES + 1):
            fault = points.sending(d.target)
            reject = fault is not None and fault.kind == FaultKind.REJECT_NEXT
            emit.attempt(hub=d.sender, delivery_id=d.id, target=d.target, attempt=attempt)
            fut: asyncio.Future[str] = asyncio.get_running_loop().create_future()
            self.calls[(d.id, attempt)] = fut
            self.send(self.cluster.node_for(d.target), {"op": "call", "attempt": attempt,
                                                         "reject": reject, "d": d.to_wire()})
            status = await self._result(fut)
            self.calls.pop((d.id, attempt), None)
            if status == "ok":
                self.end_leg(leg, "completed")
                return
            timed_out = status == "timeout"
            error = {"timeout": "Timeout", "rejected": "rejected"}.get(status, "NotFound")
            emit.attempt_failed(hub=d.sender, delivery_id=d.id, attempt=attempt, error=error,
                                timed_out=timed_out)
            if not is_resendable(status) or attempt == config.CALL_RETRIES:
                break
            backoff_ms = min(config.RETRY_BASE_MS * 2 ** attempt, config.RETRY_CAP_MS)
            await asyncio.sleep(backoff_ms / 1000)
        if error == "rejected":
            error = "Refused"
        self.end_leg(leg, "failed")
        self.answer(d, error)

    async def _result(self, fut: asyncio.Future[str]) -> str:
        """The callee's word, or 'timeout' once the response timeout passed."""
        done, _ = await asyncio.wait({fut}, timeout=config.RESPONSE_TIMEOUT_MS / 1000)
        return fut.result() if done else "timeout"

    def _on_call(self, origin: str, body: dict[str, Any]) -> None:
        if self.cluster.completed:
            return
        d = Delivery.from_wire(body["d"])
        attempt = body["attempt"]
        if body["reject"]:
            self.send(origin, {"op": "result", "id": d.id, "attempt": attempt,
                               "status": "rejected"})
            return
        if d.target not in self.hubs or points.removed(d.target):
            self.send(origin, {"op": "result", "id": d.id, "attempt": attempt,
                               "status": "not_found"})
            return
        if d.id in self.received_calls:
            return
        self.received_calls.add(d.id)
        self.start(self._take_call(origin, d, attempt))

    async def _take_call(self, origin: str, d: Delivery, attempt: int) -> None:
        fault = await points.receiving(d.target)
        if self.cluster.completed or d.target not in self.hubs:
            return
        emit.call_received(hub=d.target, delivery_id=d.id, attempt=attempt)
        if fault is not None:
            # The caller's reply is lost: it gives up at its timeout, and the call runs after.
            await asyncio.sleep(config.RESPONSE_TIMEOUT_MS / 1000 + 0.001)
        hub = self.hubs.get(d.target)
        if hub is None or self.cluster.completed:
            return
        hub.offer(d)
        if fault is None:
            self.send(origin, {"op": "result", "id": d.id, "attempt": attempt, "status": "ok"})

    # ----- subscriptions ----------------------------------------------------------------
    async def subscribe(self, sub: Subscription) -> None:
        self.subs[sub.id] = sub
        self._sub_attempt(sub, 0)

    def _sub_attempt(self, sub: Subscription, attempt: int) -> None:
        """Send the subscription's request as a route leg, unless the stop has begun by now."""
        if not self.accepting:
            # The stop began since this attempt was asked for (in the same instant, say):
            # no route leg may start, so the subscription ends with the silo instead.
            self._end_with_silo(sub)
            return
        sub.attempt = attempt
        req = Delivery(id=self.next_id("r"), sender=sub.subscriber, target=sub.target,
                       type="SubscribeRequest", cls=USER, subscription=sub.id)
        sub.request, sub.timed_out = req.id, False
        self.sub_by_request[req.id] = sub
        emit.subscribe_attempt(hub=sub.subscriber, subscription_id=sub.id, attempt=sub.attempt,
                               target=sub.target, delivery_id=req.id)
        leg = self.start_leg("route", req)
        self.send(self.cluster.node_for(req.target), {"op": "subreq", "leg": leg.id, "req": req.id,
                                                       "target": req.target})
        loop = asyncio.get_running_loop()
        leg.timer = loop.call_later(config.RESPONSE_TIMEOUT_MS / 1000, self._leg_timed_out,
                                    leg.id, "subreq")
        sub.timer = loop.call_later(config.SUBSCRIBE_TIMEOUT_MS / 1000, self._sub_timeout,
                                    sub, sub.attempt)

    def _sub_current(self, sub: Subscription, request: str) -> bool:
        return not sub.closed and request == sub.request and not sub.timed_out

    def _sub_answered(self, sub: Subscription, request: str) -> None:
        if not self._sub_current(sub, request):
            return
        self._close(sub)
        emit.subscribe_answered(hub=sub.subscriber, subscription_id=sub.id, attempt=sub.attempt)

    def _sub_failed(self, sub: Subscription, request: str, error: str) -> None:
        stale = sub.closed if self.settings.bug("f08") else not self._sub_current(sub, request)
        if stale:
            return
        if sub.timer is not None:
            sub.timer.cancel()
        self._sub_retry(sub, error)

    def _sub_timeout(self, sub: Subscription, attempt: int) -> None:
        if sub.closed or attempt != sub.attempt:
            return
        sub.timed_out = True
        self._sub_retry(sub, "timeout")

    def _sub_retry(self, sub: Subscription, error: str) -> None:
        if sub.attempt >= sub.retries:
            self._close(sub)
            emit.subscribe_terminated(hub=sub.subscriber, subscription_id=sub.id,
                                      attempt=sub.attempt, reason=f"retries_exhausted:{error}")
            return
        delay = config.SUBSCRIBE_BACKOFF_MS * 2 ** sub.attempt
        sub.timer = asyncio.get_running_loop().call_later(delay / 1000, self._sub_next, sub)

    def _sub_next(self, sub: Subscription) -> None:
        if sub.closed:
            return
        self._sub_attempt(sub, sub.attempt + 1)

    def _close(self, sub: Subscription) -> None:
        sub.closed = True
        if sub.timer is not None:
            sub.timer.cancel()
        self.subs.pop(sub.id, None)

    def end_subscriptions(self) -> None:
        """The stop ends every open subscription."""
        for sub in list(self.subs.values()):
            self._end_with_silo(sub)

    def _end_with_silo(self, sub: Subscription) -> None:
        self._close(sub)
        emit.subscribe_terminated(hub=sub.subscriber, subscription_id=sub.id,
                                  attempt=sub.attempt, reason="silo_stopped")
