"""TinyMesh behind mesh-harness's adapter protocol: the mesh's log, as harness trace events.

The mesh keeps its own log (`tinymesh.log`); this adapter drives the mesh and translates
each note into the `TraceEvent` the harness's checkers read (docs/adapter.md of
mesh-harness). TinyMesh has no grain router: grain routes travel by courier like any
routed letter, and grain-call faults are noted but change nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from invariants.adapter import Capability, Chooser, Fault, FaultKind, MessageSpec, Route
from invariants.trace import EventKind, MessageClass, TraceEvent
from tinymesh.letters import Body, Bounce, Kind, Plain
from tinymesh.log import Note
from tinymesh.mesh import TinyMesh

# The mesh's words for what happened, and the harness's.
EVENTS: Mapping[str, EventKind] = MappingProxyType({
    "box_opened": EventKind.HUB_CREATED,
    "offered": EventKind.POSTED,
    "queued": EventKind.ENQUEUED,
    "served": EventKind.HANDLED,
    "refused": EventKind.REJECTED,
    "closed_out": EventKind.GATED,
    "tripped": EventKind.BREAKER_TRIPPED,
    "muted": EventKind.DROPPED,
    "spilled": EventKind.SHED,
    "paused": EventKind.TURN_BLOCKED,
    "resumed": EventKind.TURN_RELEASED,
    "bounced": EventKind.FAILURE_EMITTED,
    "withheld": EventKind.ANSWER_SUPPRESSED,
    "leg_open": EventKind.LEG_STARTED,
    "leg_close": EventKind.LEG_ENDED,
    "turned_away": EventKind.DISPATCH_REFUSED,
    "watch_try": EventKind.SUBSCRIBE_ATTEMPT,
    "watch_ok": EventKind.SUBSCRIBE_ANSWERED,
    "watch_gave_up": EventKind.SUBSCRIBE_TERMINATED,
    "stop_begin": EventKind.STOP_REQUESTED,
    "stage_in": EventKind.STOP_STAGE_ENTERED,
    "stage_out": EventKind.STOP_STAGE_LEFT,
    "hold_on": EventKind.STOP_HOLD_STARTED,
    "hold_off": EventKind.STOP_HOLD_RELEASED,
    "leftover": EventKind.RESIDUAL_LEG,
    "stop_done": EventKind.STOP_COMPLETED,
    "fault": EventKind.FAULT_INJECTED,
})
# The mesh's field names, and the trace's.
FIELDS: Mapping[str, str] = MappingProxyType({
    "box": "hub", "letter": "delivery_id", "sender": "sender", "target": "target",
    "subject": "message_type", "kind": "message_class", "topic": "diagnostic_key",
    "answers": "answers", "error": "error", "leg": "leg_id", "trip": "leg_kind",
    "watch": "subscription_id", "try_no": "attempt", "stage": "stage",
    "graceful": "graceful", "why": "reason", "how": "reason", "depth": "depth",
    "blob": "packaged", "spill_at": "watermark", "fault": "reason",
})
CLASSES: Mapping[Kind, MessageClass] = MappingProxyType({
    Kind.REQUEST: MessageClass.USER, Kind.CONTROL: MessageClass.LIFECYCLE,
    Kind.SYSTEM: MessageClass.SYSTEM, Kind.CHATTER: MessageClass.IGNORABLE,
    Kind.BOUNCE: MessageClass.FAILURE,
})
KINDS: Mapping[MessageClass, Kind] = MappingProxyType({c: k for k, c in CLASSES.items()})
# Values the mesh and the trace spell differently.
WORDS: Mapping[str, str] = MappingProxyType({
    "carry": "route", "return": "nack",  # leg kinds
    "landed": "completed", "lost": "failed", "cut": "drained",  # how a leg ended
    "quiet": "may_answer_false", "again": "already_answered", "stopped": "silo_stopped",
})


class TinyMeshAdapter:
    """Drives one TinyMesh; every tie between timers due at once is asked of the chooser."""

    capabilities = frozenset({Capability.SUBSCRIBE, Capability.STOP_LIFECYCLE,
                              Capability.BREAKER_THRESHOLD})

    def __init__(self, chooser: Chooser) -> None:
        self.mesh = TinyMesh(lambda options: chooser.choose(options, "next due timer"))
        self._events: list[TraceEvent] = []

    def create_hub(self, address: str, *, watermark: int | None = None,
                   breaker_threshold: int | None = None) -> None:
        self.mesh.open_box(address, spill_at=watermark, storm_threshold=breaker_threshold)

    def post(self, sender: str, target: str, message: MessageSpec, *,
             identity: str | None = "user", route: Route = Route.MONOLITH) -> str:
        body: Body
        if message.message_class is MessageClass.FAILURE:
            # The harness posts a notice as traffic: it answers a letter outside the run.
            body = Bounce(answers="x0", reason="Lost")  # harness: allow[MESH001] test traffic
        else:
            kind = KINDS[message.message_class]
            body = Plain(message.type_name, kind, message.diagnostic_key)
        return self.mesh.send(sender, target, body, caller=identity,
                              routed=route is not Route.DIRECT)

    def subscribe(self, subscriber: str, target: str, *, retries: int = 5) -> str:
        return self.mesh.watch(subscriber, target, retries)

    def inject(self, fault: Fault) -> None:
        mesh = self.mesh
        mesh.log.write(mesh.clock.now, "fault", fault=fault.kind.value, target=fault.target)
        if fault.kind is FaultKind.BLOCK_HUB:
            mesh.pause(fault.target, fault.duration_ms)
        elif fault.kind is FaultKind.SLOW_DESTINATION:
            mesh.slow_down(fault.target, fault.duration_ms)
        elif fault.kind is FaultKind.REMOVE_TARGET:
            mesh.close_box(fault.target)
        # REJECT_NEXT, TIMEOUT_NEXT: grain calls, which TinyMesh does not have.

    def advance(self, ms: int) -> None:
        self.mesh.clock.run_until(self.mesh.clock.now + ms)

    def run_until_idle(self, limit_ms: int) -> bool:
        return self.mesh.clock.run_idle(limit_ms)

    def stop(self, *, graceful: bool = True) -> None:
        self.mesh.stop(graceful=graceful)

    def now_ms(self) -> int:
        return self.mesh.clock.now

    def trace(self) -> Sequence[TraceEvent]:
        notes = self.mesh.log.notes
        for note in notes[len(self._events):]:  # translate only what is new
            self._events.append(self._event(len(self._events), note))
        return self._events

    def _event(self, seq: int, note: Note) -> TraceEvent:
        values: dict[str, Any] = {}
        for name, value in note.fields.items():
            if value is None:
                continue
            if isinstance(value, Kind):
                value = CLASSES[value]
            elif isinstance(value, str):
                value = _word(name, value)
            values[FIELDS[name]] = value
        return TraceEvent(seq, note.at, EVENTS[note.what], **values)


def _word(name: str, value: str) -> str:
    if name in ("trip", "how", "why"):
        if value.startswith("gave_up:"):  # a watch that ran out of tries
            return "retries_exhausted:" + value.removeprefix("gave_up:")
        return WORDS.get(value, value)
    return value


def make(chooser: Chooser) -> TinyMeshAdapter:
    """The adapter factory named in pyproject.toml's [tool.harness] adapter."""
    return TinyMeshAdapter(chooser)
