"""The seed scenarios as fixed step programs, so the known shapes are always tried.

Each program is a list of (rule name, arguments) for the machine of its check, in the
shape of a test from the seeds; `invariants.dynamic.runner.run_program` runs one without
Hypothesis (same rules, same checks after every step, same liveness at teardown).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from invariants.adapter import Route
from invariants.checks import CheckParams

Step = tuple[str, dict[str, Any]]
Program = tuple[Step, ...]

M, G, D = Route.MONOLITH, Route.GRAIN, Route.DIRECT


@dataclass(frozen=True, slots=True)
class Figure:
    """A duration a program states as one of the mesh's own figures (a `CheckParams`
    field, in ms) plus `plus` ms: "just past the subscribe timeout" is the mesh's timeout
    and 100 ms, whatever the mesh's number, not the seeds' 30 s."""

    name: str
    plus: int = 0

    def of(self, params: CheckParams) -> int:
        value = getattr(params, self.name)
        if not isinstance(value, int):
            raise TypeError(f"{self.name} is not a figure in ms")
        return max(value + self.plus, 0)


def resolved(program: Program, params: CheckParams) -> Program:
    """`program` with every `Figure` replaced by its value under `params`."""
    return tuple(
        (step, {key: value.of(params) if isinstance(value, Figure) else value
                for key, value in arguments.items()})
        for step, arguments in program
    )


def _init(*watermarks: int | None, roundtrip: bool = False) -> Step:
    padded = (*watermarks, None, None, None)[:3]
    arguments: dict[str, Any] = {"watermarks": padded, "swarm": {}, "scenario": None}
    if roundtrip:  # the envelope round trip, on for the whole program
        arguments["roundtrip"] = True
    return ("init", arguments)


def _answer_once(*, roundtrip: bool = False) -> Program:
    """On a stopping host: a heartbeat, a DeliveryFailure and a control message through
    each router; only the control message is answered (#1485)."""
    return (
        _init(roundtrip=roundtrip),
        ("slow", {"to": "h1", "duration_ms": 5_000}),
        _user("h1"),
        ("stop", {"graceful": True}),
        ("advance", {"ms": 1, "schedule": []}),
        *[
            step
            for route in (M, G)
            for step in (
                ("ignorable", {"sender": "client", "to": "h0", "route": route, "count": 1}),
                ("failure", {"sender": "client", "to": "h0", "route": route,
                             "lifecycle": False}),
                _user("h0", route),
            )
        ],
    )


def _user(to: str, route: Route = M, count: int = 1, sender: str = "client") -> Step:
    return ("user", {"sender": sender, "to": to, "route": route, "count": count})


# A moment past the first attempt of a subscription: its answer, or its timeout, is in.
_PAST_FIRST_ATTEMPT = Figure("subscribe_timeout_ms", 1_000)

# Subscriptions to a live hub and to a missing one, their subscriber's turn held just past
# the subscriptions' timeout: each first request's answer (the response, the NotFound) is
# handled in the backoff before the second request, when none is pending. The subscriber
# ignores a late answer: its handler must not raise (INV7), and it must not start a second
# chain of retries (INV2).
_ANSWER_IN_BACKOFF: Program = (
    _init(),
    ("subscribe", {"subscriber": "client", "to": "h0"}),
    ("subscribe", {"subscriber": "client", "to": "ghost"}),
    ("block", {"to": "client", "duration_ms": Figure("subscribe_timeout_ms", 100)}),
    ("advance", {"ms": _PAST_FIRST_ATTEMPT, "schedule": []}),
)


def _two_holds(first_ms: int, second_ms: int) -> Program:
    """h0's turn held, a user message queued behind it, and 250 ms later a second hold;
    then a second passes, inside whichever hold lasts longer."""
    return (
        _init(),
        ("block", {"to": "h0", "duration_ms": first_ms}),
        _user("h0", D),
        ("advance", {"ms": 250, "schedule": []}),
        ("block", {"to": "h0", "duration_ms": second_ms}),
        ("advance", {"ms": 1_000, "schedule": []}),
    )


SEED_PROGRAMS: Mapping[str, Mapping[str, Program]] = {
    "INV1": {
        # A post with no identity, repeated: logged once each, never answered (seed 004).
        "rejection": (
            _init(),
            *[("anonymous", {"sender": "client", "to": "h0", "route": r, "message_class": "user"})
              for r in (D, M, G)],
            ("advance", {"ms": 1_000, "schedule": []}),
        ),
        # The DeliveryFailure/ShutdownRequest ping-pong: failures to a departed owner, through
        # each router and straight to the intake (the hub's own reporting tail).
        "failure-ping-pong": (
            _init(),
            ("failure", {"sender": "client", "to": "ghost", "route": M, "lifecycle": False}),
            ("failure", {"sender": "client", "to": "h0/gone", "route": G, "lifecycle": True}),
            ("failure", {"sender": "client", "to": "ghost", "route": D, "lifecycle": False}),
            ("advance", {"ms": 1_000, "schedule": []}),
        ),
    },
    "INV2": {
        # Subscribe to a path that does not exist under a live prefix (seed 004, test 3).
        "missing-target": (
            _init(),
            ("subscribe", {"subscriber": "client", "to": "h0/gone"}),
            ("advance", {"ms": _PAST_FIRST_ATTEMPT, "schedule": []}),
        ),
        # And to a hub that exists, beside it: that one is answered, never retried out.
        "live-target": (
            _init(),
            ("subscribe", {"subscriber": "client", "to": "h0"}),
            ("subscribe", {"subscriber": "peer", "to": "h1/gone"}),
            ("advance", {"ms": _PAST_FIRST_ATTEMPT, "schedule": []}),
        ),
        # The silo stops while a subscription to a missing target waits out its first
        # backoff (its attempt failed NotFound, the retry not yet due): the stop ends it,
        # and it never resubscribes on the stopped silo.
        "stop-in-backoff": (
            _init(),
            ("subscribe", {"subscriber": "client", "to": "h0/gone"}),
            ("advance", {"ms": 100, "schedule": []}),
            ("stop", {"graceful": True}),
            ("advance", {"ms": _PAST_FIRST_ATTEMPT, "schedule": []}),
        ),
        "answer-in-backoff": _ANSWER_IN_BACKOFF,
    },
    "INV3": {
        # Watermark 25, the turn held, 200 can-be-ignored messages, a user probe (test 4).
        "flood": (
            _init(25),
            ("block", {"to": "h0", "duration_ms": 1_000}),
            ("flood", {"to": "h0", "count": 200, "route": D}),
            _user("h0", D),
            ("advance", {"ms": 1_000, "schedule": []}),
        ),
        # One key of heartbeats one past the mesh's own breaker threshold, at a hub with
        # the mesh's own watermark: none may be dropped as a storm. (The search's chatter
        # meets the thresholds it draws, on an adapter that takes one.)
        "chatter": (_init(), ("chatter", {"to": "h0", "route": D})),
        # A hold extended while it lasts: the turn stays held until the later one ends.
        "overlapping-holds": _two_holds(1_000, 5_000),
        # A shorter hold inside a longer one: it does not cut the longer one short.
        "hold-inside-a-hold": _two_holds(5_000, 1_000),
    },
    "INV4": {
        # A delivery whose call outlives the response timeout: 1 call, not 7 (seed 000).
        "timeout": (
            _init(),
            ("timeout", {"to": "h0", "count": 7}),
            _user("h0", G),
        ),
        # One timeout armed, then one more, three deliveries: the first two calls time
        # out (each sent once), the third goes through; only what the harness made time
        # out times out.
        "one-timeout": (
            _init(),
            ("timeout", {"to": "h1", "count": 1}),
            ("timeout", {"to": "h1", "count": 1}),
            _user("h1", G, count=3),
        ),
        # An invalid activation on every call: re-sent until the budget is spent.
        "rejection-retry": (
            _init(),
            ("reject", {"to": "h1", "count": 7}),
            _user("h1", G),
            ("advance", {"ms": 30_000, "schedule": []}),
        ),
        # One rejection: re-sent once, and the second call goes through (seed 000: a
        # rejection is re-sent, and only what was refused fails).
        "one-rejection": (
            _init(),
            ("reject", {"to": "h2", "count": 1}),
            _user("h2", G),
            ("advance", {"ms": 1_000, "schedule": []}),
        ),
        # A timeout inside an aggregate with a rejection, in either order: still 1 call
        # (seed 000's ATimeoutCarriedInsideAnAggregate_IsAlsoNotResent(timeoutFirst)).
        "aggregate": (
            _init(),
            ("aggregate", {"to": "h0", "count": 7, "timeout_first": True}),
            ("aggregate", {"to": "h1", "count": 7, "timeout_first": False}),
            _user("h0", G),
            _user("h1", G),
        ),
    },
    "INV5": {
        # Graceful stop with legs in flight, one answered NotFound (seed 001).
        "stop-with-legs": (
            _init(),
            ("slow", {"to": "h1", "duration_ms": 5_000}),
            ("slow", {"to": "h0/gone", "duration_ms": 6_000}),
            _user("h1", G, count=3),
            _user("h0/gone"),
            ("advance", {"ms": 100, "schedule": []}),
            ("stop", {"graceful": True}),
        ),
        # Legs that outlive the stop budget: released, residual named oldest first.
        "stop-budget-expiry": (
            _init(),
            ("slow", {"to": "h2", "duration_ms": Figure("stop_budget_ms", 15_000)}),
            _user("h2"),
            ("advance", {"ms": 1, "schedule": []}),
            _user("h2", sender="peer"),
            ("stop", {"graceful": True}),
        ),
        # The host gives up mid-hold (its shutdown timeout expired): the hold ends there.
        "stop-given-up": (
            _init(),
            ("slow", {"to": "h1", "duration_ms": 20_000}),
            _user("h1", G, count=2),
            ("advance", {"ms": 100, "schedule": []}),
            ("stop", {"graceful": True, "give_up_ms": 1_000}),
        ),
        # A graceful stop with nothing in flight: nothing to wait for, so no hold.
        "stop-idle": (_init(), ("stop", {"graceful": True})),
        "stop-non-graceful": (
            _init(),
            ("slow", {"to": "h1", "duration_ms": 5_000}),
            _user("h1", G, count=3),
            ("stop", {"graceful": False}),
        ),
        # The same a while after the posts: a mesh that dispatches as its loop runs (not as
        # it is posted to) has made them legs by then, still in flight to the slowed hub.
        "stop-non-graceful-in-flight": (
            _init(),
            ("slow", {"to": "h1", "duration_ms": 5_000}),
            _user("h1", G, count=3),
            ("advance", {"ms": 100, "schedule": []}),
            ("stop", {"graceful": False}),
        ),
        # The host gives up in the stop's own instant, before its first stage (its shutdown
        # timeout expired before Active): with legs in flight, Active holds nothing.
        "stop-given-up-at-once": (
            _init(),
            ("slow", {"to": "h1", "duration_ms": 5_000}),
            _user("h1", G, count=2),
            ("advance", {"ms": 100, "schedule": []}),
            ("stop", {"graceful": True, "give_up_ms": 0}),
        ),
        # Once the stop has closed the teardown gates, application messages posted straight
        # to a hub's intake are refused there, never handled (a lifecycle message beside
        # them may pass a gate that lets lifecycle traffic through).
        "gate-closed": (
            _init(),
            ("stop", {"graceful": True}),
            ("advance", {"ms": 1, "schedule": []}),
            _user("h0", D),
            ("ignorable", {"sender": "client", "to": "h1", "route": D, "count": 1}),
            ("failure", {"sender": "client", "to": "h2", "route": D, "lifecycle": True}),
        ),
        # Posts to missing targets through each router race a graceful stop: their legs are
        # answered NotFound during the hold, and each NACK travels back as a leg the stop
        # waits for, which ends only once its answer has landed at the sender.
        "stop-nack-in-flight": (
            _init(),
            ("stop", {"graceful": True, "racing": [("ghost", M), ("h0/gone", G),
                                                   ("h0/gone", M)]}),
            ("advance", {"ms": 1_000, "schedule": []}),
        ),
    },
    "INV6": {
        # One sender, target and type about 5,000 payload identities in one window (#1200).
        "fanout": (_init(), ("fanout", {"to": "h0", "extra": 2_999})),
        # And a genuine storm on one key next to it, ramping up: past the threshold in all
        # over two windows (never dropped), then within one (dropped, legitimately) until
        # the cooldown has passed and the key is admitted again.
        "storm": (
            _init(),
            ("storm", {"to": "h1"}),
            ("fanout", {"to": "h1", "extra": 0}),
        ),
        # A key's windows to the millisecond: a post as its first window closes opens the
        # next (admitted, though the key's last window was full), and that window full, a
        # post a millisecond before it closes trips.
        "window-edges": (_init(), ("storm", {"to": "h1", "edges": True})),
        # Past the breaker's bound of 10,000 tracked keys (SPEC, "Storm breaker"): the
        # threshold + 9,001 identities, 11,001 at the reference's threshold and 10,001 at
        # one of 1,000 (the examples'). Once the table is full every fresh key evicts the
        # one idle the longest, and is still admitted.
        "fanout-past-key-bound": (_init(), ("fanout", {"to": "h0", "extra": 9_000})),
    },
    "INV7": {
        "answer-once": _answer_once(),
        # The same with every envelope through the wire format and back: the marker that
        # suppresses the answer survives serialisation (seed 004, "also after a JSON
        # round trip").
        "answer-once-roundtrip": _answer_once(roundtrip=True),
        # A backlog at one hub, posted in one instant: every message reaches an end (each
        # request gets its outcome; a message left queued is lost without an answer).
        "backlog": (_init(), _user("h0", D, count=3), _user("h1", M, count=2)),
        # A departed owner heart-beaten: its heartbeats fail routing and are never answered.
        "departed-owner": (
            _init(),
            ("ignorable", {"sender": "client", "to": "ghost", "route": M, "count": 3}),
            ("ignorable", {"sender": "client", "to": "h0/gone", "route": G, "count": 3}),
            _user("ghost"),
        ),
        # Answers to a sender with a hub of its own ("peer"): a post to a missing hub under
        # a live one is answered NotFound, handled nowhere, and the answer lands at the
        # sender and joins its queue.
        "answer-lands": (
            _init(),
            _user("h0/gone", sender="peer"),
            _user("ghost", sender="peer"),
        ),
        # A call refused until its retries are spent: its Rejected answer lands at the
        # sender, not at the callee that refused it.
        "refused-call-answered": (
            _init(),
            ("reject", {"to": "h1", "count": 8}),
            _user("h1", G, sender="peer"),
            ("advance", {"ms": 31_000, "schedule": []}),
        ),
        # Posts to hubs that exist, made once the stop has begun, through each router: each
        # is refused and answered ShuttingDown, never NotFound (its target is alive).
        "refused-live-hub": (
            _init(),
            ("stop", {"graceful": True}),
            _user("h0"),
            _user("h1", G, sender="peer"),
            ("advance", {"ms": 1_000, "schedule": []}),
        ),
        # A payload whose handler raises, with an ordinary one queued behind it at the same
        # hub in the same instant: the hub logs the fault and goes on to the second.
        "raising-handler": (
            _init(),
            ("raising", {"sender": "client", "to": "h0"}),
        ),
        "answer-in-backoff": _ANSWER_IN_BACKOFF,
    },
}
