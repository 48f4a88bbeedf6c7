"""INV3: no single action block can be driven past its drain rate (seed 004, Invariant 3).

Past a hub's aggregate watermark only sheddable (can-be-ignored) messages are shed, and
they are; user-facing and lifecycle messages are kept and handled, a turn the harness
blocked handles nothing, and the per-key breaker never counts exempt traffic.

Obligations (docs/dynamic-invariants.md, INV3): "sheddable messages shed past the
watermark", "user-facing and lifecycle messages kept past the watermark", "probes handled
after a blocked turn's release", "blocked turns held", "exempt traffic kept off the breaker".
"""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType

from invariants.adapter import FaultKind
from invariants.checks.harness_facts import HarnessFact, Injected
from invariants.checks.monitor import Monitor, check_function
from invariants.checks.params import DEFAULT_PARAMS, CheckParams
from invariants.checks.violation import Violation
from invariants.trace import EventKind, MessageClass, TraceEvent

# FAULT_INJECTED reason of a hub removal (the adapter protocol's fault kind value).
REMOVE_TARGET = "remove_target"

# Classes the per-key storm breaker never counts.
_BREAKER_EXEMPT = frozenset({MessageClass.IGNORABLE, MessageClass.LIFECYCLE, MessageClass.FAILURE})
_KEPT = frozenset({MessageClass.USER, MessageClass.LIFECYCLE})  # never shed
# What may be shed past the watermark: the sheddable class, which must be, and failure
# answers, which seed 004 names beside it ("shed [CanBeIgnored]/failure-class messages");
# the reference keeps them, and either is correct.
_MAY_SHED = frozenset({MessageClass.IGNORABLE, MessageClass.FAILURE})
# Intake events judged by the class the harness posted their delivery with.
_CLASSED = frozenset({EventKind.SHED, EventKind.DROPPED, EventKind.ENQUEUED,
                      EventKind.BREAKER_TRIPPED})
# Read for every event: module constants, not slow attribute lookups on the enum classes.
_ENQUEUED, _HANDLED, _SHED, _DROPPED, _TRIPPED = (
    EventKind.ENQUEUED, EventKind.HANDLED, EventKind.SHED, EventKind.DROPPED,
    EventKind.BREAKER_TRIPPED,
)
_FAULT_INJECTED, _HUB_CREATED, _TURN_RELEASED, _STOP_COMPLETED = (
    EventKind.FAULT_INJECTED, EventKind.HUB_CREATED, EventKind.TURN_RELEASED,
    EventKind.STOP_COMPLETED,
)
_USER = MessageClass.USER


SHED = "sheddable messages shed past the watermark"
KEPT = "user-facing and lifecycle messages kept past the watermark"
PROBES = "probes handled after a blocked turn's release"
EXEMPT = "exempt traffic kept off the breaker"
HELD = "blocked turns held"


class AggregateWatermark(Monitor):
    check_id = "INV3"
    title = "the aggregate watermark sheds only sheddable traffic"
    reads_custom_events = False
    obligations = MappingProxyType({
        SHED: "no queue reached its watermark with sheddable traffic arriving (is the "
        "`flood` family on with `block`, and is watermark the mesh's?)",
        KEPT: "no user-facing or lifecycle message arrived at a queue at or above its "
        "watermark (a probe behind a flood)",
        PROBES: "no user-facing message was queued behind a blocked turn (is the `block` "
        "family on?)",
        EXEMPT: "no can-be-ignored, lifecycle or failure message reached an intake",
        HELD: "no block_hub the harness injected ran out (is the `block` family on?)",
    })

    def __init__(self, params: CheckParams = DEFAULT_PARAMS) -> None:
        super().__init__(params)
        self._depth: dict[str, int] = {}  # queue depth per hub, as counted from the trace
        self._queued_users: dict[str, dict[str, TraceEvent]] = {}  # hub -> id -> ENQUEUED
        self._released: dict[str, TraceEvent] = {}  # hub -> its last TURN_RELEASED
        self._due: dict[str, tuple[int, TraceEvent]] = {}  # user id -> (deadline, ENQUEUED)
        self._stated: dict[str, int] = {}  # hub -> watermark its HUB_CREATED stated
        self._blocked: dict[str, tuple[int, Injected]] = {}  # hub -> (held until, the block)
        self._removed: set[str] = set()  # hubs the harness removed: a block there holds nothing

    def on_fact(self, fact: HarnessFact) -> None:
        if not isinstance(fact, Injected):
            return
        if fact.kind is FaultKind.REMOVE_TARGET:
            self._removed.add(fact.target)
            self._blocked.pop(fact.target, None)
        elif fact.kind is FaultKind.CRASH_NODE:
            # What a crashed node queued is lost with it, and the harness does not know
            # which hubs shared it: no message queued at the crash is owed a turn.
            for queued_at in list(self._queued_users):
                self._forget_queue(queued_at)
        elif fact.kind is FaultKind.BLOCK_HUB and fact.target not in self._removed:
            until = fact.time_ms + fact.duration_ms
            held = self._blocked.get(fact.target)
            if held is None or held[0] < until:  # overlapping holds last until the latest ends
                self._blocked[fact.target] = (until, fact)

    def _check_held(self, event: TraceEvent) -> None:
        """Holds that ran out by `event`'s time are counted; a HANDLED inside one is not
        allowed."""
        for hub, (until, block) in list(self._blocked.items()):
            if event.time_ms >= until:
                del self._blocked[hub]
                self.exercised(HELD)
            elif event.kind is _HANDLED and event.hub == hub:
                self.flag(f"{hub} handled {event.delivery_id} at {event.time_ms} ms, while "
                          f"the turn the harness blocked at {block.time_ms} ms for "
                          f"{block.duration_ms:,} ms was held (until {until} ms)", event)

    def _watermark(self, hub: str) -> int:
        """The driver's configured figure first, then what the mesh stated, then the default."""
        if hub in self.params.watermarks:
            return self.params.watermarks[hub]
        return self._stated.get(hub, self.params.watermark)

    def _intake_depth(self, hub: str) -> int:
        # Counted from the trace (ENQUEUED joins the queue, HANDLED leaves it), so the check
        # does not rely on the depth a mesh reports about itself.
        return self._depth.get(hub, 0)

    def observe(self, event: TraceEvent) -> None:
        if self._blocked:
            self._check_held(event)
        kind = event.kind
        if kind is _FAULT_INJECTED and event.reason == REMOVE_TARGET:
            self._forget_hub(event.target)
            return
        if kind is _HUB_CREATED and event.hub:
            # Made afresh (a node rebuilt after a crash makes its hubs again): its queue is
            # empty, and what the old one queued is gone with it.
            self._depth.pop(event.hub, None)
            self._forget_queue(event.hub)
            if event.watermark is not None:
                self._stated[event.hub] = event.watermark
            return
        if kind is _STOP_COMPLETED:
            # The silo is down: what its hubs still queue is the stop's business (INV5
            # judges what a stop must hold), not a turn the watermark withheld.
            for queued_at in list(self._queued_users):
                self._forget_queue(queued_at)
            return
        hub = event.hub
        if hub is None:
            return
        # The event itself is completed (`_as_posted`) only where it is kept or flagged:
        # most of a flood is counted by its class alone.
        cls = self._posted_class(event) if kind in _CLASSED else event.message_class
        if kind is _ENQUEUED:
            self._observe_enqueued(event, hub, cls)
        elif kind is _HANDLED:
            self._depth[hub] = max(0, self._depth.get(hub, 0) - 1)
            if event.delivery_id is not None:
                self._queued_users.get(hub, {}).pop(event.delivery_id, None)
                if self._due.pop(event.delivery_id, None) is not None:
                    self.exercised(PROBES)
        elif kind is _SHED:
            watermark = self._watermark(hub)
            if cls in _BREAKER_EXEMPT:
                self.exercised(EXEMPT)
            if cls not in _MAY_SHED:
                what = cls.value if cls else "unclassified"
                self.flag(f"{what} message {event.delivery_id} shed at {hub}",
                          self._as_posted(event, cls))
            elif self._intake_depth(hub) < watermark:
                self.flag(
                    f"message {event.delivery_id} shed at {hub} at depth "
                    f"{self._intake_depth(hub)} below watermark {watermark}",
                    self._as_posted(event, cls),
                )
            else:
                self.exercised(SHED)
        elif (kind is _DROPPED or kind is _TRIPPED) and cls in _BREAKER_EXEMPT:
            self.flag(
                f"per-key breaker counted {cls.value} traffic at {hub} ({kind.value}); "
                "its trip count must stay 0 for such a flood",
                self._as_posted(event, cls),
            )
        elif kind is _TURN_RELEASED:
            self._released[hub] = event
            deadline = event.time_ms + self.params.probe_deadline_ms
            for did, enqueued in self._queued_users.get(hub, {}).items():
                self._due.setdefault(did, (deadline, enqueued))

    def _posted_class(self, event: TraceEvent) -> MessageClass | None:
        """The class the harness posted the intake event's delivery with (ground truth),
        else the one its intake's POSTED stated; a mesh that reports another class for it
        is flagged."""
        said = self.facts.stated_class(event)
        posted = self.harness.posted(event.delivery_id)
        if posted is None or posted.target != event.hub or said is posted.message_class:
            return said
        if said is not None and event.kind is not _TRIPPED:
            self.flag(
                f"the mesh reports {event.delivery_id} at {event.hub} as {said.value}, but "
                f"the harness posted it as {posted.message_class.value}",
                self.facts.complete(event),
            )
        return posted.message_class

    def _as_posted(self, event: TraceEvent, cls: MessageClass | None) -> TraceEvent:
        """The intake event as the check judged it: the fields its intake's POSTED stated
        filled in, and `cls`, the class `_posted_class` found for it."""
        event = self.facts.complete(event)
        return event if event.message_class is cls else replace(event, message_class=cls)

    def _observe_enqueued(self, event: TraceEvent, hub: str, cls: MessageClass | None) -> None:
        depth = self._intake_depth(hub)
        if hub in self._blocked and depth and event.depth == depth:
            # The mesh's own count after this message is the trace's before it: its held
            # turn has taken one message off the queue and holds it, not yet HANDLED (the
            # seed's wedged action block, whose queue no longer holds what its thread
            # works on). One message, only while the harness holds the turn.
            depth -= 1
        watermark = self._watermark(hub)
        if cls in _BREAKER_EXEMPT:
            self.exercised(EXEMPT)
        if depth >= watermark and cls in _KEPT:
            self.exercised(KEPT)
        if cls is not None and cls.sheddable and depth >= watermark:
            self.flag(
                f"sheddable message {event.delivery_id} admitted to {hub} at depth {depth} "
                f">= watermark {watermark} (must be shed)",
                self._as_posted(event, cls),
            )
        self._depth[hub] = self._depth.get(hub, 0) + 1
        # One queued while a node the harness crashed is down may be on that node: lost
        # with it, as what it queued at the crash (INV7 reads a post made then alike).
        if cls is _USER and event.delivery_id is not None \
                and event.time_ms >= self.harness.down_until:
            self._queued_users.setdefault(hub, {})[event.delivery_id] = self._as_posted(event, cls)

    def _forget_hub(self, hub: str | None) -> None:
        """A removed hub's queue is gone with it: nothing in it is owed a turn."""
        if hub is None:
            return
        self._blocked.pop(hub, None)
        self._depth.pop(hub, None)
        self._forget_queue(hub)

    def _forget_queue(self, hub: str) -> None:
        """The user-facing messages queued at `hub` are owed no turn any more."""
        for did in self._queued_users.pop(hub, {}):
            self._due.pop(did, None)

    def overdue(self, now_ms: int) -> list[Violation]:
        return [
            self.violation(
                f"user-facing message {did} at {enqueued.hub} not handled within "
                f"{self.params.probe_deadline_ms} ms of the turn's release",
                enqueued,
                self._released[enqueued.hub or ""],
            )
            for did, (deadline, enqueued) in self._due.items()
            if now_ms > deadline
        ]

    def unfinished(self) -> list[Violation]:
        return [
            self.violation(f"user-facing message {did} queued at {hub} never handled", enqueued)
            for hub, queued in self._queued_users.items()
            for did, enqueued in queued.items()
        ]


check = check_function(AggregateWatermark)
