"""Planted bugs: each one switched on by its name in `Mesh(bugs=...)`, off by default.

Every record says what the bug does, which invariant it breaks (one of the architecture's,
or TURN1, aiomesh's own in aiomesh_invariants/), and whether it is a same-instant race: a
bug that shows only when two things due at the same instant run in the order FIFO never
picks (the stock loop, with real time, never does).
The mesh's code reads `name in mesh.bugs` at the one place each bug lives.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True, slots=True)
class Bug:
    name: str
    breaks: str  # INV1..INV7, "AT_MOST_ONCE" (a de-duplicating mesh) or TURN1 (aiomesh's own)
    race: bool  # a same-instant race: FIFO order and the stock loop miss it
    summary: str


_ALL = (
    Bug("nack-rejected", "INV1", False,
        "the identity guard answers the post it rejects with a DeliveryFailure"),
    Bug("answer-failures", "INV1", False,
        "report_failure answers whatever it is handed, a DeliveryFailure too (ping-pong)"),
    Bug("payload-type-guard", "INV7", False,
        "may_answer reads the payload's type, which is RawJson once packaged"),
    Bug("unbounded-resubscribe", "INV2", False,
        "a NotFound does not count against a subscription's retry budget"),
    Bug("late-answer-resets-budget", "INV2", True,
        "an answer arriving in the instant its attempt timed out resets the retry budget"),
    Bug("shed-anything", "INV3", False,
        "past the watermark every message is shed, user-facing ones too"),
    Bug("no-watermark", "INV3", False,
        "no aggregate watermark: a hub's queue of sheddable traffic grows without bound"),
    Bug("resend-timeouts", "INV4", False,
        "the call retry re-sends after a response timeout (gated on is_transient)"),
    Bug("uncapped-backoff", "INV4", False,
        "the call retry delay doubles without its cap"),
    Bug("resend-unheld-timeout", "INV4", True,
        "a timed-out call the callee no longer holds is taken for lost and re-sent, though "
        "the callee took it up in that same instant: it applies it twice"),
    Bug("key-without-identity", "INV6", False,
        "the breaker key leaves out the payload identity: a wide fan-out is a storm"),
    Bug("breaker-reopen-timer", "INV6", True,
        "a tripped key is reopened by a task sleeping out the cooldown: a post in the "
        "instant the cooldown ends, run before that task, is dropped"),
    Bug("no-stop-hold", "INV5", False,
        "the serving stage never holds: in-flight legs are cut by the stop"),
    Bug("give-up-ignored", "INV5", False,
        "a non-graceful stop during a graceful one does not end the hold"),
    Bug("detached-nack", "INV5", False,
        "a failure answer travels on a bare timer, outside the legs the stop waits for"),
    Bug("leg-registers-late", "INV5", True,
        "a leg joins the in-flight count in its own first step: a stop starting in the "
        "same instant finds nothing to wait for"),
    Bug("pump-dies-on-fault", "INV7", False,
        "a handler that raises is not caught: the hub's pump task dies with the exception "
        "and what is queued behind it is never handled"),
    Bug("dedupe-after-reply", "AT_MOST_ONCE", False,
        "at-least-once mode records an applied delivery only when its caller still "
        "waits: a re-send after a timeout is applied again"),
    Bug("forget-answered", "AT_MOST_ONCE", True,
        "at-least-once mode forgets a delivery once its reply is handed to a waiting "
        "caller: a caller whose timeout fires in that same instant sends it again, and the "
        "callee applies it twice"),
    Bug("turn-awaits-flush", "TURN1", False,
        "a hub journals what it applies, and the turn that fills a batch awaits the "
        "journal's flush before it ends: the turn takes time, and every message queued "
        "behind it waits"),
)

BUGS: Mapping[str, Bug] = MappingProxyType({bug.name: bug for bug in _ALL})


def checked(names: Iterable[str]) -> frozenset[str]:
    """The bug names, each one known; a typo is an error, not a silently clean mesh."""
    chosen = frozenset(names)
    unknown = sorted(chosen - BUGS.keys())
    if unknown:
        raise ValueError(f"unknown bug(s) {unknown}; known: {sorted(BUGS)}")
    return chosen
