"""The switchboard behind mesh-harness's adapter protocol, on the harness's virtual loop.

The switchboard journals in its own words; `_record` translates each entry into a trace
event through three tables. Direct posts arrive as the harness's outside callers would:
each sender's posts on a lane of their own, in the order it made them, while different
senders' lanes land in whatever order the harness's Chooser picks. Routed posts, calls,
subscriptions and the stop are dispatched in the call itself (the dispatch is what a stop
must refuse from the moment it is asked for).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any

from invariants.adapter import (
    Capability,
    Chooser,
    Fault,
    FaultKind,
    MessageSpec,
    Route,
)
from invariants.aio import AsyncMeshAdapter, emit
from invariants.trace import MessageClass

from .board import Switchboard
from .journal import Journal
from .parcels import Klass, Note, Parcel, Undeliverable

# The journal's events, and the trace's.
EVENTS: Mapping[str, str] = MappingProxyType({
    "inbox_opened": "hub_created", "offered": "posted", "queued": "enqueued",
    "refused_anon": "rejected", "gated": "gated", "tripped": "breaker_tripped",
    "throttled": "dropped", "shed": "shed", "served": "handled",
    "handler_crashed": "handler_faulted", "bounced": "failure_emitted",
    "reply_withheld": "answer_suppressed", "leg_open": "leg_started",
    "leg_closed": "leg_ended", "refused_dispatch": "dispatch_refused", "call_sent": "attempt",
    "call_failed": "attempt_failed", "call_taken": "call_received", "sub_try": "subscribe_attempt",
    "sub_ok": "subscribe_answered", "sub_gave_up": "subscribe_terminated",
    "stop_asked": "stop_requested", "stage_in": "stop_stage_entered",
    "stage_out": "stop_stage_left", "hold_begin": "stop_hold_started",
    "hold_end": "stop_hold_released", "leftover_leg": "residual_leg",
    "stopped": "stop_completed",
})
# The journal's field names, and the trace's.
FIELDS: Mapping[str, str] = MappingProxyType({
    "inbox": "hub", "parcel": "delivery_id", "sender": "sender", "target": "target",
    "kind": "message_type", "klass": "message_class", "topic": "diagnostic_key",
    "answers": "answers", "error": "error", "leg": "leg_id", "leg_kind": "leg_kind",
    "sub": "subscription_id", "attempt": "attempt", "stage": "stage", "graceful": "graceful",
    "why": "reason", "depth": "depth", "sealed": "packaged", "watermark": "watermark",
    "timed_out": "timed_out",
})
# Traffic classes both ways.
CLASSES: Mapping[Klass, MessageClass] = MappingProxyType({
    Klass.REQUEST: MessageClass.USER, Klass.CONTROL: MessageClass.LIFECYCLE,
    Klass.SYSTEM: MessageClass.SYSTEM, Klass.CHATTER: MessageClass.IGNORABLE,
    Klass.BOUNCE: MessageClass.FAILURE,
})
KLASSES: Mapping[MessageClass, Klass] = MappingProxyType({v: k for k, v in CLASSES.items()})


class HandlerFault(RuntimeError):
    """Raised by the handler of a payload the harness posted to raise."""


def _raise(parcel: Parcel, body: Note | Undeliverable) -> None:
    raise HandlerFault(f"{body.kind} {parcel.id} asked its handler to raise")


class SwitchboardAdapter(AsyncMeshAdapter):
    capabilities = frozenset({
        Capability.GRAIN_ROUTER, Capability.SUBSCRIBE, Capability.STOP_LIFECYCLE,
        Capability.AGGREGATE_FAULTS, Capability.ENVELOPE_ROUNDTRIP,
        Capability.RAISING_HANDLERS, Capability.BREAKER_THRESHOLD, Capability.TIMER_TIES,
    })

    def __init__(self, chooser: Chooser, *, bugs: Iterable[str] = ()) -> None:
        super().__init__(chooser)
        self.board = Switchboard(self.loop, journal=Journal(self._record), bugs=bugs)
        self._lanes: dict[str, list[Parcel]] = {}
        self._lane_tasks: dict[str, asyncio.Task[None]] = {}
        self._outside = 0
        with self.active():
            self.board.start()

    # The protocol.

    def create_hub(self, address: str, *, watermark: int | None = None,
                   breaker_threshold: int | None = None) -> None:
        with self.active():
            self.board.open_inbox(address, watermark=watermark,
                                  breaker_threshold=breaker_threshold)

    def has_hub(self, address: str) -> bool:
        return address in self.board.inboxes

    def post(self, sender: str, target: str, message: MessageSpec, *,
             identity: str | None = "user", route: Route = Route.MONOLITH) -> str:
        board = self.board
        with self.active():
            board.ensure_inbox(sender)
            parcel = Parcel(board.next_id("p"), sender, target, identity, self._body(message))
            if message.handler_raises and target in board.inboxes:
                board.inboxes[target].on(message.type_name, _raise)
            if route == Route.DIRECT:
                self._on_lane(parcel)
            elif route == Route.GRAIN:
                board.call(parcel)
            else:
                board.send(parcel)
        return parcel.id

    def subscribe(self, subscriber: str, target: str, *, retries: int = 5) -> str:
        with self.active():
            self.board.ensure_inbox(subscriber)
            return self.board.subscribe(subscriber, target, retries=retries)

    def stop(self, *, graceful: bool = True) -> None:
        with self.active():
            self.board.begin_stop(graceful=graceful)

    def set_envelope_roundtrip(self, on: bool) -> None:
        self.board.relay.wire_roundtrip = on

    def on_fault(self, fault: Fault) -> None:
        board, target = self.board, fault.target
        if fault.kind == FaultKind.REMOVE_TARGET:
            board.remove_inbox(target)
        elif fault.kind == FaultKind.BLOCK_HUB:
            board.pause(target, fault.duration_ms)
        elif fault.kind == FaultKind.SLOW_DESTINATION:
            board.relay.slow_down(target, fault.duration_ms)
        elif fault.kind == FaultKind.REJECT_NEXT:
            board.faults.refuse_next(target, fault.count)
        elif fault.kind == FaultKind.TIMEOUT_NEXT:
            board.faults.stall_next(target, fault.count)
        elif fault.kind == FaultKind.AGGREGATE_NEXT:
            board.faults.group_next(target, fault.count, timeout_first=fault.timeout_first)

    # Helpers.

    def _body(self, spec: MessageSpec) -> Note | Undeliverable:
        klass = KLASSES[MessageClass(spec.message_class)]
        if klass is Klass.BOUNCE:  # a notice from outside the run: it answers nothing here
            self._outside += 1
            return Undeliverable.revive(f"outside-{self._outside}", "Failed", spec.type_name,
                                        spec.diagnostic_key)
        return Note(spec.type_name, klass, spec.diagnostic_key)

    def _on_lane(self, parcel: Parcel) -> None:
        lane = self._lanes.get(parcel.sender)
        if lane is None:
            lane = self._lanes[parcel.sender] = []
            self._lane_tasks[parcel.sender] = self.spawn(self._drain(parcel.sender))
        lane.append(parcel)

    async def _drain(self, sender: str) -> None:
        del self._lane_tasks[sender]
        for parcel in self._lanes.pop(sender):
            self.board.post_direct(parcel)

    def _record(self, event: str, fields: dict[str, Any]) -> None:
        trace: dict[str, Any] = {}
        for name, value in fields.items():
            if value is None:
                continue
            trace[FIELDS[name]] = CLASSES[value] if name == "klass" else value
        getattr(emit, EVENTS[event])(**trace)


def make(chooser: Chooser) -> SwitchboardAdapter:
    return SwitchboardAdapter(chooser)


def make_with(bugs: Iterable[str]) -> Callable[[Chooser], SwitchboardAdapter]:
    """A factory of switchboards with the named `bugs` switched on (none by default)."""
    chosen = frozenset(bugs)

    def factory(chooser: Chooser) -> SwitchboardAdapter:
        return SwitchboardAdapter(chooser, bugs=chosen)

    return factory


# One factory per planted bug, each with that one bug on: `switchboard.harness_adapter:bug_b01`.


def bug_b01(chooser: Chooser) -> SwitchboardAdapter:
    return SwitchboardAdapter(chooser, bugs={"b01"})


def bug_b02(chooser: Chooser) -> SwitchboardAdapter:
    return SwitchboardAdapter(chooser, bugs={"b02"})


def bug_b03(chooser: Chooser) -> SwitchboardAdapter:
    return SwitchboardAdapter(chooser, bugs={"b03"})


def bug_b04(chooser: Chooser) -> SwitchboardAdapter:
    return SwitchboardAdapter(chooser, bugs={"b04"})


def bug_b05(chooser: Chooser) -> SwitchboardAdapter:
    return SwitchboardAdapter(chooser, bugs={"b05"})


def bug_b06(chooser: Chooser) -> SwitchboardAdapter:
    return SwitchboardAdapter(chooser, bugs={"b06"})


def bug_b07(chooser: Chooser) -> SwitchboardAdapter:
    return SwitchboardAdapter(chooser, bugs={"b07"})


def bug_b08(chooser: Chooser) -> SwitchboardAdapter:
    return SwitchboardAdapter(chooser, bugs={"b08"})


def bug_b09(chooser: Chooser) -> SwitchboardAdapter:
    return SwitchboardAdapter(chooser, bugs={"b09"})


def bug_b10(chooser: Chooser) -> SwitchboardAdapter:
    return SwitchboardAdapter(chooser, bugs={"b10"})


def bug_b11(chooser: Chooser) -> SwitchboardAdapter:
    return SwitchboardAdapter(chooser, bugs={"b11"})


def bug_b12(chooser: Chooser) -> SwitchboardAdapter:
    return SwitchboardAdapter(chooser, bugs={"b12"})


def bug_b13(chooser: Chooser) -> SwitchboardAdapter:
    return SwitchboardAdapter(chooser, bugs={"b13"})


def bug_b14(chooser: Chooser) -> SwitchboardAdapter:
    return SwitchboardAdapter(chooser, bugs={"b14"})


def bug_b15(chooser: Chooser) -> SwitchboardAdapter:
    return SwitchboardAdapter(chooser, bugs={"b15"})


def bug_b16(chooser: Chooser) -> SwitchboardAdapter:
    return SwitchboardAdapter(chooser, bugs={"b16"})


def bug_b17(chooser: Chooser) -> SwitchboardAdapter:
    return SwitchboardAdapter(chooser, bugs={"b17"})
