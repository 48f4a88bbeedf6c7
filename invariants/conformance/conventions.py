"""The trace conventions an adapter must keep, checked on one trace and what the harness did.

A checker trusts the trace's shape: that every leg ends, that ids are introduced before
they are used, that a post the harness made appears with the facts it was given. An adapter
that breaks a convention does not fail an invariant: it makes the checkers read the wrong
thing. `broken_conventions(trace, posts, ...)` says, one `Broken` per break, which
convention, at which event, and where `docs/adapter.md` states it.

Pure: it reads only the trace and the harness's own record of what it asked for.
"""

from __future__ import annotations

import typing
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from invariants.adapter import MessageSpec, Route
from invariants.trace import CustomEventError, EventKind, TraceEvent, custom_event

DOC = "docs/adapter.md"

# The intake's verdicts on a POSTED delivery: exactly one follows each offer.
INTAKE_OUTCOMES = frozenset({
    EventKind.ENQUEUED, EventKind.REJECTED, EventKind.GATED, EventKind.DROPPED, EventKind.SHED,
})


@dataclass(frozen=True)
class Broken:
    """One broken convention: its anchor in the adapter guide, the event, what is wrong."""

    convention: str  # the section anchor in docs/adapter.md
    seq: int | None  # the event that shows it (None: something that never appeared)
    kind: str  # that event's kind, or what was missing
    message: str

    def line(self, program: str) -> str:
        where = f"seq {self.seq} {self.kind}" if self.seq is not None else self.kind
        return f"{program}: {where}: {self.message} ({DOC}#{self.convention})"


@dataclass(frozen=True)
class Post:
    """A post the harness made, and the id the adapter returned for it."""

    delivery_id: str
    sender: str
    target: str
    spec: MessageSpec
    route: Route
    exists: bool  # whether the target was a hub the harness created


def broken_conventions(
    trace: Sequence[TraceEvent],
    posts: Sequence[Post] = (),
    subscriptions: Sequence[str] = (),
) -> list[Broken]:
    """Every convention `trace` breaks, given what the harness posted and subscribed."""
    return [
        *_order(trace),
        *_field_types(trace),
        *_custom(trace),
        *_intake(trace),
        *_legs(trace),
        *_attempts(trace),
        *_grain_leg_ends(trace),
        *_subscriptions(trace, subscriptions),
        *_posts(trace, posts),
    ]


def _order(trace: Sequence[TraceEvent]) -> Iterable[Broken]:
    last = None
    for index, event in enumerate(trace):
        if event.seq != index:
            yield Broken("event-order", event.seq, event.kind.name,
                         f"seq is {event.seq} but the event is number {index} of the trace")
        if last is not None and event.time_ms < last.time_ms:
            yield Broken("event-order", event.seq, event.kind.name,
                         f"time goes backwards: {event.time_ms} ms after seq {last.seq} at "
                         f"{last.time_ms} ms")
        last = event


# What each field of a trace event holds: a checker reads them as these types (a message
# class's `.value`, an attempt's arithmetic), so one of another type makes it read nonsense.
_FIELD_TYPES: dict[str, type] = {
    name: typing.get_origin(held) or held  # a custom event's `data`: a tuple
    for name, hint in typing.get_type_hints(TraceEvent).items()
    for held in [next(t for t in typing.get_args(hint) or (hint,) if t is not type(None))]
}


def _field_types(trace: Sequence[TraceEvent]) -> Iterable[Broken]:
    """Every field holds its type (None where it does not apply): a `message_class` is a
    `MessageClass`, not its string; `seq`, `time_ms`, `attempt` are whole numbers."""
    for event in trace:
        for name, expected in _FIELD_TYPES.items():
            value = getattr(event, name)
            if value is None and name not in ("seq", "time_ms", "kind"):
                continue
            wrong = not isinstance(value, expected) or (
                expected is int and isinstance(value, bool))
            if wrong:
                kind = event.kind.name if isinstance(event.kind, EventKind) else repr(event.kind)
                yield Broken("fields", event.seq if isinstance(event.seq, int) else None, kind,
                             f"{name} is {value!r} ({type(value).__name__}), not "
                             f"{_article(expected.__name__)}")


def _custom(trace: Sequence[TraceEvent]) -> Iterable[Broken]:
    """A custom event has a namespaced name and JSON-scalar fields (what `custom_event`
    makes); no other kind carries either."""
    for event in trace:
        if event.kind is EventKind.CUSTOM:
            try:
                custom_event(event.seq, event.time_ms, event.custom,  # type: ignore[arg-type]
                             hub=event.hub, **dict(event.data or ()))
            except (CustomEventError, TypeError) as exc:
                yield Broken("fields", event.seq, "CUSTOM", str(exc))
        elif event.custom is not None or event.data is not None:
            yield Broken("fields", event.seq, event.kind.name,
                         "custom and data belong to a CUSTOM event only")


def _article(name: str) -> str:
    return f"an {name}" if name[0] in "aeiouAEIOU" else f"a {name}"


def _intake(trace: Sequence[TraceEvent]) -> Iterable[Broken]:
    """Each POSTED has exactly one intake outcome at that hub before the next offer of the
    same delivery there; HANDLED comes only after ENQUEUED."""
    open_offers: dict[tuple[str | None, str | None], TraceEvent] = {}
    enqueued: set[tuple[str | None, str | None]] = set()
    for event in trace:
        key = (event.hub, event.delivery_id)
        if event.kind is EventKind.POSTED:
            if key in open_offers:
                yield Broken("intake", open_offers[key].seq, "POSTED",
                             f"{event.delivery_id} was offered to {event.hub} again (seq "
                             f"{event.seq}) before the intake decided the first offer")
            open_offers[key] = event
        elif event.kind in INTAKE_OUTCOMES:
            if open_offers.pop(key, None) is None:
                yield Broken("intake", event.seq, event.kind.name,
                             f"{event.delivery_id} has no POSTED at {event.hub} before it")
            if event.kind is EventKind.ENQUEUED:
                enqueued.add(key)
        elif event.kind is EventKind.HANDLED and key not in enqueued:
            yield Broken("intake", event.seq, "HANDLED",
                         f"{event.delivery_id} handled at {event.hub} but never ENQUEUED there")
    for event in open_offers.values():
        yield Broken("intake", event.seq, "POSTED",
                     f"{event.delivery_id} at {event.hub} got no intake outcome (one of "
                     "ENQUEUED, REJECTED, GATED, DROPPED, SHED)")


def _legs(trace: Sequence[TraceEvent]) -> Iterable[Broken]:
    started: dict[str, TraceEvent] = {}
    ended: set[str] = set()
    for event in trace:
        leg = event.leg_id
        if event.kind is EventKind.LEG_STARTED:
            if leg is None:
                yield Broken("legs", event.seq, "LEG_STARTED", "a leg without a leg_id")
            elif leg in started:
                yield Broken("legs", event.seq, "LEG_STARTED",
                             f"leg id {leg} reused (first started at seq {started[leg].seq})")
            else:
                started[leg] = event
        elif event.kind is EventKind.LEG_ENDED:
            if leg not in started:
                yield Broken("legs", event.seq, "LEG_ENDED", f"leg {leg} ended, never started")
            elif leg in ended:
                yield Broken("legs", event.seq, "LEG_ENDED", f"leg {leg} ended twice")
            else:
                ended.add(leg)
    for leg, event in started.items():
        if leg not in ended:
            yield Broken("legs", event.seq, "LEG_STARTED",
                         f"leg {leg} ({event.leg_kind} of {event.delivery_id}) never ended, "
                         "although the mesh went quiet")


def _attempts(trace: Sequence[TraceEvent]) -> Iterable[Broken]:
    made: set[tuple[str | None, int | None]] = set()
    for event in trace:
        key = (event.delivery_id, event.attempt)
        if event.kind is EventKind.ATTEMPT:
            made.add(key)
        elif event.kind in (EventKind.ATTEMPT_FAILED, EventKind.CALL_RECEIVED):
            if key not in made:
                yield Broken("grain-calls", event.seq, event.kind.name,
                             f"attempt {event.attempt} of {event.delivery_id} has no ATTEMPT "
                             "before it")
            if event.kind is EventKind.ATTEMPT_FAILED and event.timed_out is None:
                yield Broken("grain-calls", event.seq, "ATTEMPT_FAILED",
                             "timed_out must be true or false (a timeout anywhere in the error)")


_CALL_EVENTS = frozenset({EventKind.ATTEMPT, EventKind.ATTEMPT_FAILED, EventKind.CALL_RECEIVED})


def _grain_leg_ends(trace: Sequence[TraceEvent]) -> Iterable[Broken]:
    """A grain delivery's leg ends once its calls are over: after the answer of its last
    call (the callee ran it, or it failed and is not re-sent), never while a call or a
    retry is still to come. INV4 reads a leg's end as the delivery given up, INV5 counts
    it out of flight."""
    ended: dict[str, TraceEvent] = {}
    for event in trace:
        did = event.delivery_id
        if did is None:
            continue
        if event.kind is EventKind.LEG_ENDED and event.leg_kind != "nack":
            ended.setdefault(did, event)
        elif event.kind in _CALL_EVENTS and did in ended:
            end = ended.pop(did)
            yield Broken("legs", end.seq, "LEG_ENDED",
                         f"{did}'s leg ended ({end.reason}) before its calls were over: "
                         f"{event.kind.name} of attempt {event.attempt} follows at seq "
                         f"{event.seq}; a grain leg ends with its last call's outcome")


def _subscriptions(trace: Sequence[TraceEvent], subscriptions: Sequence[str]) -> Iterable[Broken]:
    ends: Counter[str | None] = Counter()
    attempted: set[str | None] = set()
    for event in trace:
        sid = event.subscription_id
        if event.kind is EventKind.SUBSCRIBE_ATTEMPT:
            if ends[sid]:
                yield Broken("subscribe", event.seq, "SUBSCRIBE_ATTEMPT",
                             f"subscription {sid} sent a request after it ended")
            attempted.add(sid)
        elif event.kind in (EventKind.SUBSCRIBE_ANSWERED, EventKind.SUBSCRIBE_TERMINATED):
            if sid not in attempted:
                yield Broken("subscribe", event.seq, event.kind.name,
                             f"subscription {sid} ended without a SUBSCRIBE_ATTEMPT")
            ends[sid] += 1
            if ends[sid] == 2:
                yield Broken("subscribe", event.seq, event.kind.name,
                             f"subscription {sid} ended twice")
    for sid in subscriptions:
        if not ends[sid]:
            yield Broken("subscribe", None, "SUBSCRIBE_ANSWERED|TERMINATED",
                         f"subscription {sid} (returned by subscribe) never answered nor "
                         "terminated, although the mesh went quiet")


# Events that carry a delivery's facts as the mesh saw them at its first hop.
_FACT_EVENTS = frozenset({
    EventKind.POSTED, EventKind.LEG_STARTED, EventKind.DISPATCH_REFUSED, EventKind.ATTEMPT,
})
_ANSWERED = frozenset({EventKind.FAILURE_EMITTED, EventKind.ANSWER_SUPPRESSED})


def _posts(trace: Sequence[TraceEvent], posts: Sequence[Post]) -> Iterable[Broken]:
    """Every post the harness made shows up, under the id the adapter returned, with the
    sender, class and identity key it was given."""
    ids = Counter(post.delivery_id for post in posts)
    for did, count in ids.items():
        if count > 1:
            yield Broken("posts", None, "post()", f"post() returned the id {did} {count} times")
    first: dict[str, TraceEvent] = {}
    answered: set[str] = set()
    called: dict[str, TraceEvent] = {}  # delivery id -> its first grain call
    landed: dict[str, TraceEvent] = {}  # delivery id -> its first POSTED
    for event in trace:
        seen_id = event.delivery_id
        if event.kind in _FACT_EVENTS and seen_id is not None and seen_id not in first:
            first[seen_id] = event
        if event.kind is EventKind.POSTED and seen_id is not None:
            landed.setdefault(seen_id, event)
        if event.kind in _ANSWERED:
            answered.add(event.answers or seen_id or "")
        if event.kind is EventKind.ATTEMPT and seen_id is not None:
            called.setdefault(seen_id, event)
    for post in posts:
        call = called.get(post.delivery_id)
        if call is not None and post.route is not Route.GRAIN:
            # The harness chose the route: INV4 and the faults read a grain call as one it
            # asked for.
            yield Broken("posts", call.seq, call.kind.name,
                         f"{post.delivery_id} was posted by the {post.route.value} route, but "
                         "the mesh made a grain call of it")
        yield from _packaging(post, landed.get(post.delivery_id))
        named = first.get(post.delivery_id)
        if named is None:
            if post.exists or post.delivery_id not in answered:
                yield Broken("posts", None, "POSTED",
                             f"the harness posted {post.delivery_id} ({post.spec.type_name} "
                             f"from {post.sender} to {post.target}), but no event names it")
            continue
        yield from _facts(post, named)


def _packaging(post: Post, landed: TraceEvent | None) -> Iterable[Broken]:
    """A router packages what it carries (INV7 reads `packaged` to judge its guards); a
    direct post reaches the intake as it was made."""
    if landed is None or landed.packaged is None or landed.hub != post.target:
        return
    routed = post.route is not Route.DIRECT
    if landed.packaged is not routed:
        how = "packages it" if routed else "does not package it"
        yield Broken("posts", landed.seq, landed.kind.name,
                     f"{post.delivery_id} was posted by the {post.route.value} route, which "
                     f"{how}, but arrived at {post.target} with packaged={landed.packaged}")


def _facts(post: Post, event: TraceEvent) -> Iterable[Broken]:
    given: dict[str, object] = {
        "sender": post.sender,
        "message_class": post.spec.message_class,
        "message_type": post.spec.type_name,
    }
    if event.kind is EventKind.POSTED:
        given["diagnostic_key"] = post.spec.diagnostic_key
    for name, value in given.items():
        seen = getattr(event, name)
        if seen is not None and seen != value:
            yield Broken("posts", event.seq, event.kind.name,
                         f"{post.delivery_id} was posted with {name}={value!r}, the trace says "
                         f"{seen!r}")
