"""What the harness itself did: the ground truth a check sets beside the mesh's account.

The trace is the mesh's own story. The harness facts are what the state machine did to
the mesh: each post as it was made (sender, target, message class, payload identity,
access identity, route), each subscription it started, each fault it injected, the stop
it asked for, all with the
virtual time and the trace position at which they happened (SPEC §6). Where a fact
decides a question (which identity did this post carry? did the harness make this call
time out?) the check judges from it, and a trace that contradicts it is a violation.

`seq` is the length of the trace when the harness acted: the fact comes before trace
event `seq`, so a whole trace and its facts can be replayed in their true order.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from invariants.adapter import FaultKind, Route
from invariants.trace import MessageClass, TraceEvent


@dataclass(frozen=True, slots=True)
class Posted:
    """The harness posted `delivery_id` with exactly these fields."""

    delivery_id: str
    sender: str
    target: str
    message_type: str
    message_class: MessageClass
    diagnostic_key: str | None  # the payload identity the harness gave the message
    identity: str | None  # the access context (None: posted without one)
    route: Route
    time_ms: int
    seq: int
    handler_raises: bool = False  # the harness asked for a payload whose handler raises


@dataclass(frozen=True, slots=True)
class Injected:
    """The harness armed a fault."""

    kind: FaultKind
    target: str
    count: int
    duration_ms: int
    time_ms: int
    seq: int
    timeout_first: bool = True  # AGGREGATE_NEXT: the order inside the aggregate


@dataclass(frozen=True, slots=True)
class StopAsked:
    """The harness asked the silo to stop."""

    graceful: bool
    time_ms: int
    seq: int


@dataclass(frozen=True, slots=True)
class Subscribed:
    """The harness started a bounded subscription (its id as the adapter returned it)."""

    subscription_id: str
    subscriber: str
    target: str
    retries: int
    time_ms: int
    seq: int


@dataclass(frozen=True, slots=True)
class RoundTripSet:
    """The harness switched the adapter's envelope round trip on (or off): packaged
    envelopes go through the mesh's wire format and back before they are routed."""

    on: bool
    time_ms: int
    seq: int


@dataclass(frozen=True, slots=True)
class HubsMade:
    """The harness made these hubs (`create_hub`); a sender's hub is made by its first post
    too. A target outside them, or one it removed, is missing."""

    hubs: tuple[str, ...]
    time_ms: int
    seq: int


@dataclass(frozen=True, slots=True)
class NetworkHeld:
    """The harness's verdicts on a simulated network held a segment past its link's
    latency (or lost a datagram), for the first time in the run: from then on a call may
    fail by the network's doing, as after a network fault."""

    time_ms: int
    seq: int


HarnessFact = Posted | Injected | StopAsked | Subscribed | RoundTripSet | HubsMade | NetworkHeld


@dataclass
class HarnessFacts:
    """The facts told so far, indexed for the checks."""

    posts: dict[str, Posted] = field(default_factory=dict)
    injections: list[Injected] = field(default_factory=list)
    stops: list[StopAsked] = field(default_factory=list)
    subscriptions: dict[str, Subscribed] = field(default_factory=dict)
    roundtrip: bool = False  # envelopes round-trip through the wire format from now on
    network_held: bool = False  # the network's verdicts held or lost something so far
    # A node the harness crashed is down until then (ms): the harness knows which node it
    # crashed, not which hubs it hosted, so every hub may be down until then.
    down_until: int = 0
    crashed_at: int | None = None  # when it last crashed one (ms)
    # Posts the mesh gave an id it had given an earlier post: (the earlier, the later).
    reused: list[tuple[Posted, Posted]] = field(default_factory=list)
    roundtripped: set[str] = field(default_factory=set)  # posts made while it was on
    made: set[str] | None = None  # the hubs the harness made (None: it did not say)
    removed: set[str] = field(default_factory=set)  # the hubs it removed
    # When each was told, as the number of facts before it: the harness's own order.
    told: int = 0
    post_told: dict[str, int] = field(default_factory=dict)  # delivery id -> when
    removal_told: dict[str, int] = field(default_factory=dict)  # hub -> its first removal

    def record(self, fact: HarnessFact) -> None:
        self.told += 1
        if isinstance(fact, Posted):
            earlier = self.posts.get(fact.delivery_id)
            if earlier is not None:
                self.reused.append((earlier, fact))
            self.posts[fact.delivery_id] = fact
            self.post_told[fact.delivery_id] = self.told
            if self.made is not None:
                self.made.add(fact.sender)
            if self.roundtrip:
                self.roundtripped.add(fact.delivery_id)
        elif isinstance(fact, Injected):
            self.injections.append(fact)
            if fact.kind is FaultKind.CRASH_NODE:
                self.down_until = max(self.down_until, fact.time_ms + fact.duration_ms)
                self.crashed_at = fact.time_ms
            if fact.kind is FaultKind.REMOVE_TARGET:
                self.removed.add(fact.target)
                self.removal_told.setdefault(fact.target, self.told)
        elif isinstance(fact, Subscribed):
            self.subscriptions[fact.subscription_id] = fact
        elif isinstance(fact, RoundTripSet):
            self.roundtrip = fact.on
        elif isinstance(fact, HubsMade):
            self.made = {*fact.hubs, *(self.made or ())}
        elif isinstance(fact, NetworkHeld):
            self.network_held = True
        else:
            self.stops.append(fact)

    def made_live(self, hub: str) -> bool:
        """A hub the harness made (or posted from) and has not removed."""
        return self.made is not None and hub in self.made and hub not in self.removed

    def posted_before_removal(self, delivery_id: str, hub: str) -> bool:
        """Whether the harness posted `delivery_id` before it removed `hub`."""
        removal = self.removal_told.get(hub)
        posted = self.post_told.get(delivery_id)
        return removal is not None and posted is not None and posted < removal

    def missing(self, hub: str) -> bool:
        """A hub the harness removed, or (where it said which it made) never made."""
        return hub in self.removed or (self.made is not None and hub not in self.made)

    def posted(self, delivery_id: str | None) -> Posted | None:
        return self.posts.get(delivery_id) if delivery_id is not None else None


def interleave(
    trace: Sequence[TraceEvent], facts: Iterable[HarnessFact]
) -> Iterator[TraceEvent | HarnessFact]:
    """Trace events and harness facts in the order they happened (a fact before event
    `fact.seq`; facts in the order given when they share a position)."""
    pending = sorted(facts, key=lambda fact: fact.seq)  # stable: ties keep their order
    at = 0
    for index, event in enumerate(trace):
        while at < len(pending) and pending[at].seq <= index:
            yield pending[at]
            at += 1
        yield event
    yield from pending[at:]
