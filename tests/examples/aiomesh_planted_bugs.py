"""The bugs planted in the aiomesh example (examples/aiomesh-repo/src/aiomesh/bugs.py) and
what the harness says about each, run on the real asyncio code through the example's
adapter (`aiomesh.harness_adapter:bug_<name>`).

`caught` is a line of the failure (an fnmatch pattern) that names the invariant, as
`check` and `pytest -p harness` print it; a bug without one is a blind spot, and
`blind_spot` says whose it is and why. `ci` marks the small deterministic sample the
suite runs (tests/examples/test_aiomesh_planted_bugs.py); benchmarks/aiomesh_races.py
measures them all.
"""

from __future__ import annotations

from dataclasses import dataclass

MODULE = "aiomesh.harness_adapter"


@dataclass(frozen=True)
class Planted:
    name: str
    expected: str  # the invariant the bug breaks (bugs.py's `breaks`; AT_MOST_ONCE is INV4's,
    # TURN1 the example's own)
    race: bool  # a same-instant race (bugs.py's `race`)
    caught: str = ""  # a line of the failure; "" for a blind spot
    blind_spot: str = ""
    ci: bool = False

    @property
    def factory(self) -> str:
        return f"{MODULE}:bug_{self.name.replace('-', '_')}"

    @property
    def item(self) -> str:
        return f"harness::{self.expected}[{self.factory}]"


# A race only an order CPython's loop cannot produce shows (docs/asyncio.md, "Which
# schedules"): no bug in production, so a pass is the right verdict.
_UNREACHABLE = "unreachable on CPython's loop: timers armed at one instant fall due in order"

PLANTED: tuple[Planted, ...] = (
    Planted("nack-rejected", "INV1", False,
            "INV1: DeliveryFailure answers rejected post * (a rejection has no reply)*",
            ci=True),
    Planted("answer-failures", "INV1", False,
            "INV1: DeliveryFailure answers DeliveryFailure * (amplification chain)*"),
    Planted("payload-type-guard", "INV7", False,
            "INV7: packaged ignorable delivery * was answered (must never be)*"),
    Planted("unbounded-resubscribe", "INV2", False,
            "INV2: subscription * made more than 4 attempts (3 retries)*"),
    # The answer's leg sleeps out its hop from the attempt's own instant, its timer armed
    # after the attempt's timeout: it never lands first, and the subscription's wake-up is
    # queued before the leg's. Only an order CPython's loop cannot run shows it: the
    # harness passes it, and must.
    Planted("late-answer-resets-budget", "INV2", True,
            blind_spot=_UNREACHABLE, ci=True),
    Planted("shed-anything", "INV3", False, "INV3: user message * shed at *"),
    Planted("no-watermark", "INV3", False,
            "INV3: sheddable message * admitted to * at depth * >= watermark * (must be shed)*"),
    Planted("resend-timeouts", "INV4", False,
            "INV4: delivery * re-sent after a timed-out attempt (callee still holds it)*"),
    Planted("uncapped-backoff", "INV4", False,
            "INV4: rejected delivery * not re-sent after attempt 4 within its backoff of "
            "500 ms*", ci=True),
    # The callee's delay timer is armed after the caller's response timeout in the same
    # instant: the caller always handles its timeout before the callee takes the call up.
    Planted("resend-unheld-timeout", "INV4", True, blind_spot=_UNREACHABLE, ci=True),
    Planted("key-without-identity", "INV6", False,
            "INV6: breaker dropped * though its key had only 1 message(s) in the window*"),
    # Found by aiming a post at the reopening task's sleep. INV6's run takes ~2 min (its
    # storms make the shrink slow): not in the sample.
    Planted("breaker-reopen-timer", "INV6", True,
            "INV6: breaker still dropped * ms after its key tripped on * (cooldown * ms)*"),
    Planted("no-stop-hold", "INV5", False,
            "INV5: stop left Active with * leg(s) in flight after 0 ms, before the budget "
            "expired*", ci=True),
    Planted("give-up-ignored", "INV5", False,
            "INV5: * after the harness gave up on the stop at * (a non-graceful stop ends "
            "the hold)*"),
    Planted("detached-nack", "INV5", False,
            "INV5: routed delivery landed after the stop completed*"),
    # A race in what the mesh does (the stop holds in FIFO order), but not in its trace:
    # INV5 reads the leg's LEG_STARTED after the harness's own stop call, in any order.
    Planted("leg-registers-late", "INV5", True,
            "INV5: route leg * dispatched after the stop began (must be refused as "
            "ShuttingDown)*", ci=True),
    # The pump task dies with the exception, which nobody awaits, and reports no fault:
    # the request queued behind the raising one is last seen queued.
    Planted("pump-dies-on-fault", "INV7", False,
            "INV7: delivery * reached no end by quiescence: last seen enqueued at *",
            ci=True),
    Planted("dedupe-after-reply", "INV4", False,
            "INV4: delivery *'s effect applied again at *: an at-least-once mesh applies "
            "each delivery at most once*"),
    # As resend-unheld-timeout: the callee's timer cannot land before the caller's
    # timeout armed ahead of it in the same instant.
    Planted("forget-answered", "INV4", True, blind_spot=_UNREACHABLE, ci=True),
    # aiomesh's own invariant (aiomesh_invariants/turns.py): the built-in ones pass it.
    Planted("turn-awaits-flush", "TURN1", False,
            "TURN1: a hub's turn ends in the instant it began: seq * (custom "
            "aiomesh.turn_started at *) was not followed by a match for key * within 0 ms*",
            ci=True),
)

BY_NAME = {bug.name: bug for bug in PLANTED}
