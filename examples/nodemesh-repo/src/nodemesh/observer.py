"""What a node reports: one method per kind of event, all ending in `note`.

The base class does nothing, so production pays a method call per event. A subclass
overrides `note` to see everything in one place (`EventLog` records it), or the methods it
cares about. Every method names the node it happened at; hubs are named by their full
'node/hub' address.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .envelope import Envelope
    from .legs import Leg


class Observer:
    def note(self, event: str, **fields: Any) -> None:
        """Every event ends here: the name of the method and its arguments."""

    # Hubs and their intake.
    def hub_opened(self, node: str, hub: str, *, watermark: int, capacity: int) -> None:
        self.note("hub_opened", node=node, hub=hub, watermark=watermark, capacity=capacity)

    def hub_closed(self, node: str, hub: str, *, left: int) -> None:
        """The hub stopped; `left` messages were still queued and are not handled."""
        self.note("hub_closed", node=node, hub=hub, left=left)

    def offered(self, node: str, hub: str, env: Envelope, *, packaged: bool) -> None:
        """`env` reached the hub's intake; `packaged`: it crossed the wire to get here."""
        self.note("offered", node=node, hub=hub, env=env, packaged=packaged)

    def queued(self, node: str, hub: str, env: Envelope, *, depth: int) -> None:
        self.note("queued", node=node, hub=hub, env=env, depth=depth)

    def unvouched(self, node: str, hub: str, env: Envelope) -> None:
        """Refused at intake: user traffic nobody vouched for. Terminal, never answered."""
        self.note("unvouched", node=node, hub=hub, env=env)

    def gated(self, node: str, hub: str, env: Envelope) -> None:
        """Refused at intake: the hub is closed."""
        self.note("gated", node=node, hub=hub, env=env)

    def shed(self, node: str, hub: str, env: Envelope, *, depth: int, watermark: int) -> None:
        self.note("shed", node=node, hub=hub, env=env, depth=depth, watermark=watermark)

    def handled(self, node: str, hub: str, env: Envelope) -> None:
        """The hub's turn took `env` from its queue and runs its handler."""
        self.note("handled", node=node, hub=hub, env=env)

    def handler_raised(self, node: str, hub: str, env: Envelope, *, error: str) -> None:
        self.note("handler_raised", node=node, hub=hub, env=env, error=error)

    # Legs: work this node sent to another node, from dispatch to its end.
    def leg_opened(self, node: str, leg: Leg, env: Envelope, *, in_flight: int) -> None:
        self.note("leg_opened", node=node, leg=leg, env=env, in_flight=in_flight)

    def leg_closed(self, node: str, leg: Leg, *, outcome: str, in_flight: int) -> None:
        """`outcome`: 'landed' (the callee took it or answered), 'failed' or 'cut' (stop)."""
        self.note("leg_closed", node=node, leg=leg, outcome=outcome, in_flight=in_flight)

    def dispatch_refused(self, node: str, env: Envelope, *, error: str) -> None:
        """A dispatch to another node refused at its source: this node is stopping."""
        self.note("dispatch_refused", node=node, env=env, error=error)

    # Calls: each attempt of a delivery to a callee, local or remote.
    def sent(self, node: str, env: Envelope, *, callee: str, attempt: int) -> None:
        self.note("sent", node=node, env=env, callee=callee, attempt=attempt)

    def taken(self, node: str, env: Envelope, *, attempt: int) -> None:
        """The callee accepted the attempt onto the target hub's intake (callee side)."""
        self.note("taken", node=node, env=env, attempt=attempt)

    def refused(self, node: str, env: Envelope, *, attempt: int, error: str) -> None:
        """The callee refused the attempt before taking it (callee side)."""
        self.note("refused", node=node, env=env, attempt=attempt, error=error)

    def send_failed(self, node: str, env: Envelope, *, attempt: int, error: str,
                    timed_out: bool) -> None:
        self.note("send_failed", node=node, env=env, attempt=attempt, error=error,
                  timed_out=timed_out)

    def late_reply(self, node: str, correlation: str) -> None:
        """A reply came for an attempt its caller had already given up on."""
        self.note("late_reply", node=node, correlation=correlation)

    # Failure answers.
    def failure_sent(self, node: str, answer: Envelope, *, answers: str, error: str) -> None:
        self.note("failure_sent", node=node, answer=answer, answers=answers, error=error)

    def answer_withheld(self, node: str, env: Envelope, *, reason: str) -> None:
        """`env` failed but is not answered: 'may_answer_false' or 'stopped'."""
        self.note("answer_withheld", node=node, env=env, reason=reason)

    # Connections.
    def link_up(self, node: str, peer: str) -> None:
        self.note("link_up", node=node, peer=peer)

    def link_lost(self, node: str, peer: str, *, error: str, pending: int) -> None:
        self.note("link_lost", node=node, peer=peer, error=error, pending=pending)

    # The staged stop.
    def stop_asked(self, node: str, *, graceful: bool, in_flight: int) -> None:
        self.note("stop_asked", node=node, graceful=graceful, in_flight=in_flight)

    def stage_entered(self, node: str, stage: int, *, in_flight: int) -> None:
        self.note("stage_entered", node=node, stage=stage, in_flight=in_flight)

    def stage_left(self, node: str, stage: int, *, in_flight: int) -> None:
        self.note("stage_left", node=node, stage=stage, in_flight=in_flight)

    def hold_began(self, node: str, *, in_flight: int) -> None:
        self.note("hold_began", node=node, in_flight=in_flight)

    def left_behind(self, node: str, leg: Leg) -> None:
        """The hold's budget ran out with `leg` still in flight (oldest first)."""
        self.note("left_behind", node=node, leg=leg)

    def hold_ended(self, node: str, *, reason: str, in_flight: int) -> None:
        """`reason`: 'drained', 'budget' or 'cancelled' (the stop was given up on)."""
        self.note("hold_ended", node=node, reason=reason, in_flight=in_flight)

    def stopped(self, node: str) -> None:
        self.note("stopped", node=node)


@dataclass(frozen=True)
class Event:
    name: str
    fields: dict[str, Any] = field(default_factory=dict)

    def __getitem__(self, key: str) -> Any:
        return self.fields[key]


class EventLog(Observer):
    """Records every event, in order."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def note(self, event: str, **fields: Any) -> None:
        self.events.append(Event(event, fields))

    def named(self, *names: str) -> list[Event]:
        return [event for event in self.events if event.name in names]

    def about(self, env_id: str, *names: str) -> list[Event]:
        """The events of `names` (all if none) whose envelope or leg is `env_id`'s."""
        def concerns(event: Event) -> bool:
            env = event.fields.get("env") or event.fields.get("answer")
            leg = event.fields.get("leg")
            return (env is not None and env.id == env_id) or (
                leg is not None and leg.env_id == env_id)
        return [e for e in self.events if concerns(e) and (not names or e.name in names)]

    def counts(self) -> dict[str, int]:
        tally: dict[str, int] = {}
        for event in self.events:
            tally[event.name] = tally.get(event.name, 0) + 1
        return dict(sorted(tally.items()))
