"""A node: a protocol object whose intake admits frames and whose turn handles them.

Intake, in order: the teardown gate, the identity guard, the per-key storm breaker,
the backlog watermark (which sheds only ignorable traffic). A node handles one frame
per turn. An idle node handles a frame inside the `data_received` callback that
brought it; a backlog is drained one frame per `call_soon` callback. A paused node
(its turn held) admits but handles nothing until the pause ends.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from relaycore.breaker import StormBreaker, breaker_key
from relaycore.frames import (
    COUNTED_CLASSES,
    RELAY_IDENTITY,
    Frame,
    Note,
    diagnostic_key,
    make_frame,
    open_body,
)
from relaycore.link import Link

if TYPE_CHECKING:
    from relaycore.relay import Relay

Handler = Callable[[Frame, dict[str, Any]], None]


class HandlerFault(Exception):
    """A payload asked its handler to fail."""


class RelayNode:
    def __init__(self, relay: Relay, address: str, watermark: int,
                 breaker: StormBreaker) -> None:
        self.relay = relay
        self.address = address
        self.watermark = watermark
        self.breaker = breaker
        self.handlers: dict[str, Handler] = {}
        self.closed = False
        self.gate_open = True
        self.shed_count = 0
        self.backlog: deque[Frame] = deque()
        self.uplink: Link | None = None
        self._busy = False
        self._next_turn: asyncio.Handle | None = None
        self._paused_until_ms: int | None = None
        self._resume: asyncio.TimerHandle | None = None
        self._held_calls: dict[str, asyncio.TimerHandle] = {}

    # The protocol side.

    def connection_made(self, transport: Link) -> None:
        self.uplink = transport

    def connection_lost(self, exc: Exception | None) -> None:
        del exc
        self.closed = True
        self.backlog.clear()
        for handle in (self._next_turn, self._resume, *self._held_calls.values()):
            if handle is not None:
                handle.cancel()
        self._held_calls.clear()
        if self.uplink is not None:
            self.uplink.close()

    def data_received(self, frame: Frame) -> None:
        if frame["kind"] == "call":
            self._take_call(frame)
        else:
            self.offer(frame)

    # Intake.

    def offer(self, frame: Frame) -> str:
        """Admit `frame` to the intake; returns the verdict traced for it."""
        tel, hub, fid = self.relay.tel, self.address, frame["id"]
        key = diagnostic_key(frame)
        tel("posted", hub=hub, delivery_id=fid, sender=frame["src"], target=frame["dst"],
            message_type=frame["type"], message_class=frame["cls"], diagnostic_key=key,
            packaged=frame["wire"], subscription_id=frame["sub"])
        if not self.gate_open:
            tel("gated", hub=hub, delivery_id=fid)
            return "gated"
        if frame["ident"] is None and frame["cls"] != "system":
            tel("rejected", hub=hub, delivery_id=fid, error="NoIdentity")  # logged once, dropped
            return "rejected"
        depth = len(self.backlog)
        if frame["cls"] in COUNTED_CLASSES:
            admitted, tripped = self.breaker.admit(
                breaker_key(frame["src"], frame["dst"], frame["type"], key), self.relay.now_ms())
            if tripped:
                tel("breaker_tripped", hub=hub, delivery_id=fid, sender=frame["src"],
                    target=frame["dst"], message_type=frame["type"], diagnostic_key=key)
            if not admitted:
                tel("dropped", hub=hub, delivery_id=fid, depth=depth, error="Ignored")
                return "dropped"
        full = depth > self.watermark if "b07" in self.relay.bugs else depth >= self.watermark
        if frame["cls"] == "ignorable" and full:
            self.shed_count += 1
            tel("shed", hub=hub, delivery_id=fid, depth=depth, watermark=self.watermark,
                error="Ignored")
            return "shed"
        self.backlog.append(frame)
        tel("enqueued", hub=hub, delivery_id=fid, depth=len(self.backlog))
        if not (self._busy or self._next_turn is not None or self._paused_until_ms is not None):
            self._turn()
        return "enqueued"

    # The turn.

    def _turn(self) -> None:
        self._next_turn = None
        if self.closed or self._paused_until_ms is not None or not self.backlog:
            return
        frame = self._next_frame()
        self._busy = True
        try:
            self.relay.tel("handled", hub=self.address, delivery_id=frame["id"],
                           message_type=frame["type"])
            try:
                self._handle(frame)
            except Exception as exc:  # a faulting handler is reported; the node goes on
                self.relay.tel("handler_faulted", hub=self.address, delivery_id=frame["id"],
                               message_type=frame["type"], error=type(exc).__name__)
        finally:
            self._busy = False
        if self.backlog and self._paused_until_ms is None and not self.closed:
            self._next_turn = self.relay.loop.call_soon(self._turn)

    def _next_frame(self) -> Frame:
        """The frame the turn takes: the oldest queued."""
        if "b15" in self.relay.bugs and len(self.backlog) > 1:
            # A backlog built up (a paused turn): user-facing traffic goes first, so the
            # probes waiting behind a flood of heartbeats meet their deadline.
            for index, queued in enumerate(self.backlog):
                if queued["cls"] == "user":
                    del self.backlog[index]
                    return queued
        return self.backlog.popleft()

    def pause(self, duration_ms: int) -> None:
        """Hold the turn for `duration_ms`; overlapping pauses last until the latest ends."""
        until = self.relay.now_ms() + duration_ms
        if self._paused_until_ms is not None and self._paused_until_ms >= until:
            return
        self._paused_until_ms = until
        if self._resume is not None:
            self._resume.cancel()
        self._resume = self.relay.loop.call_later(duration_ms / 1000, self._resumed)

    def _resumed(self) -> None:
        self._resume = None
        self._paused_until_ms = None
        if not self._busy and self._next_turn is None:
            self._turn()

    def _handle(self, frame: Frame) -> None:
        fields = open_body(frame)
        if fields.get("raises"):
            raise HandlerFault(f"{frame['type']} asked its handler to fail")
        if frame["type"] == "SubscribeRequest":
            self._acknowledge(frame)
        elif frame["type"] == "SubscribeAck" or fields.get("$") == "undeliverable":
            answers, error = fields.get("answers"), fields.get("error")
            if isinstance(answers, str):
                self.relay.watches.settle(answers, error if isinstance(error, str) else None)
        handler = self.handlers.get(frame["type"])
        if handler is not None:
            handler(frame, fields)

    def _acknowledge(self, request: Frame) -> None:
        if self.uplink is None:
            return
        ack = make_frame(self.relay.next_id("d"), self.address, request["src"], "SubscribeAck",
                         "user", Note(key=request["sub"], answers=request["id"]),
                         RELAY_IDENTITY)
        self.uplink.write(ack)

    # Calls: taken into the node's work, then run by offering the frame to its intake.

    def _take_call(self, call: Frame) -> None:
        inner: Frame = call["frame"]
        self.relay.tel("call_received", hub=self.address, delivery_id=inner["id"],
                       attempt=call["attempt"])
        loop = self.relay.loop
        if call["stall_ms"] > 0:  # the activation is wedged: it runs the call later
            if "b03" in self.relay.bugs:
                loop.call_later(call["stall_ms"] / 1000, self._run_call, call, None)
                return
            token = f"{inner['id']}#{call['attempt']}"
            self._held_calls[token] = loop.call_later(
                call["stall_ms"] / 1000, self._run_call, call, token)
            return
        if "b02" in self.relay.bugs and self.relay.now_ms() >= call["deadline_ms"]:
            # Its caller has given up by now: running the call could only run it twice.
            self._reply(call, refused="deadline passed")
            return
        self._run_call(call, None)

    def _run_call(self, call: Frame, token: str | None) -> None:
        if token is not None:
            del self._held_calls[token]
        verdict = self.offer(call["frame"])
        if verdict == "rejected" and "b06" in self.relay.bugs:
            self._reply(call, refused="no identity")  # the node did not take the call
            return
        self._reply(call)

    def _reply(self, call: Frame, *, refused: str | None = None) -> None:
        """Answer a call to its caller: run, or refused (it holds nothing)."""
        if self.uplink is None:
            return
        reply: Frame = {"kind": "reply", "id": call["frame"]["id"], "attempt": call["attempt"]}
        if refused is not None:
            reply["refused"] = refused
        self.uplink.write(reply)

    def drop_held_calls(self) -> None:
        """Deactivation: the calls this node still holds are dropped, not run."""
        for handle in self._held_calls.values():
            handle.cancel()
        self._held_calls.clear()
