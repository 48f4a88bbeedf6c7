"""Where the mesh says what it did: one method per kind of event, each a no-op.

The mesh calls its observer at every step with keyword fields (`hub`, `delivery_id`,
`sender`, `target`, `message_type`, `message_class`, `diagnostic_key`, `answers`,
`error`, `timed_out`, `attempt`, `leg_id`, `leg_kind`, `subscription_id`, `stage`,
`graceful`, `reason`, `depth`, `packaged`, `watermark`). Subclass `Observer` and override
`note` to see them all, or single methods to see a few. Observers never change what the
mesh does; the default one costs a method call.

Some events are aiomesh's own, saying what no general vocabulary of a mesh does (a hub's
turn beginning and ending: `OWN_KINDS`). Their methods go through `custom(kind, **fields)`
on the way to `note`: override `custom` to treat them apart (the harness adapter makes
them the trace's custom events).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


class Observer:
    def note(self, kind: str, fields: dict[str, Any]) -> None:
        """Every event comes through here unless its own method is overridden."""

    def hub_created(self, **fields: Any) -> None:
        """A hub joined the mesh, with its aggregate `watermark`."""
        self.note("hub_created", fields)

    def posted(self, **fields: Any) -> None:
        """A delivery was offered to a hub's intake."""
        self.note("posted", fields)

    def enqueued(self, **fields: Any) -> None:
        """It passed every gate and joined the hub's queue."""
        self.note("enqueued", fields)

    def handled(self, **fields: Any) -> None:
        """Its turn took it from the queue."""
        self.note("handled", fields)

    def handler_faulted(self, **fields: Any) -> None:
        """Its handler raised; the pump goes on."""
        self.note("handler_faulted", fields)

    def rejected(self, **fields: Any) -> None:
        """The identity guard refused it: noted once, never answered."""
        self.note("rejected", fields)

    def gated(self, **fields: Any) -> None:
        """The hub is stopping and its gate is closed."""
        self.note("gated", fields)

    def dropped(self, **fields: Any) -> None:
        """The per-key storm breaker dropped it."""
        self.note("dropped", fields)

    def shed(self, **fields: Any) -> None:
        """The aggregate watermark shed it."""
        self.note("shed", fields)

    def breaker_tripped(self, **fields: Any) -> None:
        """A key went past its threshold."""
        self.note("breaker_tripped", fields)

    def turn_blocked(self, **fields: Any) -> None:
        """A hub's turn is held."""
        self.note("turn_blocked", fields)

    def turn_released(self, **fields: Any) -> None:
        """And released."""
        self.note("turn_released", fields)

    def failure_emitted(self, **fields: Any) -> None:
        """A DeliveryFailure answering `answers` was sent."""
        self.note("failure_emitted", fields)

    def answer_suppressed(self, **fields: Any) -> None:
        """A failure was not answered (`reason`)."""
        self.note("answer_suppressed", fields)

    def leg_started(self, **fields: Any) -> None:
        """Routed work went in flight: a `route` leg or a `nack` travelling back."""
        self.note("leg_started", fields)

    def leg_ended(self, **fields: Any) -> None:
        """It landed, failed or was cut (`reason`)."""
        self.note("leg_ended", fields)

    def dispatch_refused(self, **fields: Any) -> None:
        """A dispatch was refused: the stop has begun."""
        self.note("dispatch_refused", fields)

    def saturation_logged(self, **fields: Any) -> None:
        """The in-flight count crossed its high mark."""
        self.note("saturation_logged", fields)

    def saturation_cleared(self, **fields: Any) -> None:
        """And fell back."""
        self.note("saturation_cleared", fields)

    def attempt(self, **fields: Any) -> None:
        """A call's attempt `attempt` (0 first) was made."""
        self.note("attempt", fields)

    def attempt_failed(self, **fields: Any) -> None:
        """It failed, with `error` and `timed_out`."""
        self.note("attempt_failed", fields)

    def call_received(self, **fields: Any) -> None:
        """The callee took the call into its work queue."""
        self.note("call_received", fields)

    def subscribe_attempt(self, **fields: Any) -> None:
        """A subscription sent its request."""
        self.note("subscribe_attempt", fields)

    def subscribe_answered(self, **fields: Any) -> None:
        """It was answered."""
        self.note("subscribe_answered", fields)

    def subscribe_terminated(self, **fields: Any) -> None:
        """It ended without an answer (`reason`)."""
        self.note("subscribe_terminated", fields)

    def stop_requested(self, **fields: Any) -> None:
        """The stop began."""
        self.note("stop_requested", fields)

    def stop_stage_entered(self, **fields: Any) -> None:
        """A stop stage was entered."""
        self.note("stop_stage_entered", fields)

    def stop_stage_left(self, **fields: Any) -> None:
        """And left."""
        self.note("stop_stage_left", fields)

    def stop_hold_started(self, **fields: Any) -> None:
        """The serving stage holds for the legs in flight."""
        self.note("stop_hold_started", fields)

    def stop_hold_released(self, **fields: Any) -> None:
        """The hold ended (`reason`: drained, budget, cancelled)."""
        self.note("stop_hold_released", fields)

    def residual_leg(self, **fields: Any) -> None:
        """A leg still in flight when the hold's budget expired."""
        self.note("residual_leg", fields)

    def stop_completed(self, **fields: Any) -> None:
        """The stop completed: nothing routing-related happens after it."""
        self.note("stop_completed", fields)

    def fault_injected(self, **fields: Any) -> None:
        """A test fault was armed."""
        self.note("fault_injected", fields)

    # aiomesh's own events.

    def custom(self, kind: str, **fields: Any) -> None:
        """An event of aiomesh's own (one of `OWN_KINDS`), noted like any other."""
        self.note(kind, fields)

    def turn_started(self, **fields: Any) -> None:
        """A hub's turn began: its pump hands `delivery_id` to the handler."""
        self.custom("turn_started", **fields)

    def turn_ended(self, **fields: Any) -> None:
        """The turn ended (a raising handler's too); the pump may take the next message."""
        self.custom("turn_ended", **fields)


OWN_KINDS = ("turn_started", "turn_ended")
KINDS = tuple(name for name in vars(Observer)
              if not name.startswith("_") and name not in ("note", "custom"))


@dataclass(frozen=True, slots=True)
class Note:
    at_ms: int
    kind: str
    fields: dict[str, Any]

    def __getitem__(self, name: str) -> Any:
        return self.fields.get(name)


class Recorder(Observer):
    """Keeps every note with the time it was made: for tests, the demo and a log."""

    def __init__(self, clock: Callable[[], int]) -> None:
        self.clock = clock
        self.notes: list[Note] = []

    def note(self, kind: str, fields: dict[str, Any]) -> None:
        self.notes.append(Note(self.clock(), kind, {k: v for k, v in fields.items()
                                                    if v is not None}))

    def of(self, kind: str, **match: Any) -> list[Note]:
        return [n for n in self.notes
                if n.kind == kind and all(n.fields.get(k) == v for k, v in match.items())]
