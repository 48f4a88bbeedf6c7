"""TURN1: a hub's turn takes no virtual time, and a hub takes one turn at a time.

aiomesh serves each hub's queue one message per turn: the pump takes a message and hands
it to the synchronous handler, and only then waits for the next one. The mesh reports the
turn as its own events, `aiomesh.turn_started` and `aiomesh.turn_ended` (the hub and the
`delivery_id`). A turn that awaits anything that takes time (a flush, a lock, a sleep)
holds every message queued behind it, however briefly: the built-in invariants say
nothing of a hub's turns, and AIO001 sees only an await of another hub's call.

- a turn ends in the instant it began (`leads_to` within 0 ms, per hub and delivery);
- every message a hub handles is handled in a turn that ends in that instant (the turn
  events cover every `HANDLED`: a mesh that reported no turns would not pass unseen);
- a hub begins no turn while one of its turns is open (`one_at_a_time`, an obligation of
  aiomesh's own built on the API's `Obligation` and `Tracker`).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from invariants.checks.api import (
    EventKind,
    KeyOf,
    Monitor,
    Obligation,
    Predicate,
    TraceEvent,
    Tracker,
    by,
    happened,
    invariant,
    leads_to,
)

CHECK_ID = "TURN1"
STARTED = "aiomesh.turn_started"
ENDED = "aiomesh.turn_ended"

# A turn is one hub's handling of one delivery.
TURN = by("hub", "delivery_id")


@dataclass(frozen=True)
class _OneAtATime(Obligation):
    opens: Predicate
    closes: Predicate
    key: KeyOf

    def tracker(self) -> Tracker:
        return _OneAtATimeTracker(self)


class _OneAtATimeTracker(Tracker):
    """Per key, the event that opened what is open now (absent: nothing is)."""

    def __init__(self, obligation: _OneAtATime) -> None:
        self._o = obligation
        self._open: dict[Hashable, TraceEvent] = {}

    def observe(self, event: TraceEvent, monitor: Monitor) -> None:
        o = self._o
        if o.closes(event):
            self._open.pop(o.key(event), None)
        if not o.opens(event):
            return
        key = o.key(event)
        before = self._open.get(key)
        if before is not None:
            monitor.flag(f"{o.name}: seq {event.seq} at {event.time_ms} ms opens another for "
                         f"{key!r} while the one opened at seq {before.seq} "
                         f"({before.time_ms} ms) is still open", before, event)
        else:
            monitor.exercised(o.name)
        self._open[key] = event


def one_at_a_time(name: str, opens: Predicate, closes: Predicate, *, key: KeyOf,
                  cause: str) -> Obligation:
    """Per key, an `opens` event only when nothing of that key is open: an `opens` event
    opens, a `closes` one closes. Each `opens` event is a case."""
    return _OneAtATime(name, cause, opens, closes, key)


HUB_TURNS = invariant(
    CHECK_ID,
    "a hub's turn takes no virtual time, one turn at a time",
    leads_to("a hub's turn ends in the instant it began", happened(STARTED), happened(ENDED),
             within_ms=0, key=TURN,
             cause="no aiomesh.turn_started event: does the mesh report its turns?"),
    leads_to("every message a hub handles is handled in a turn", happened(EventKind.HANDLED),
             happened(ENDED), within_ms=0, key=TURN,
             cause="no message was handled (did the run post anything a hub took?)"),
    one_at_a_time("a hub begins no turn while one of its turns is open", happened(STARTED),
                  happened(ENDED), key=by("hub"),
                  cause="no aiomesh.turn_started event: does the mesh report its turns?"),
)
