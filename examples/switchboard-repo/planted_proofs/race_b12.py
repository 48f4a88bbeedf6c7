"""b12 (race, INV2 closed subscriptions): a subscription to a live hub slowed so that its
acknowledgement lands in the instant its attempt times out (the harness's tied subscription).
Only when the schedule runs the acknowledgement's handling before the timeout lands does the
subscription both retry and take the answer: it is answered, and then sends another attempt.
Under FIFO the older timer, the timeout, always lands first."""

from __future__ import annotations

from _common import main, prove
from switchboard.figures import DEFAULT_FIGURES
from switchboard.harness_adapter import bug_b12, make

from invariants.adapter import Fault, FaultKind
from invariants.trace import EventKind

HOP = DEFAULT_FIGURES.hop_ms


def scenario(mesh):
    mesh.create_hub("h0")
    mesh.create_hub("client")
    # the harness's tied_call for a subscription: the wait less the round trip's hops
    mesh.inject(Fault(FaultKind.SLOW_DESTINATION, "h0",
                      duration_ms=DEFAULT_FIGURES.subscribe_timeout_ms - 2 * HOP))
    sub = mesh.subscribe("client", "h0", retries=DEFAULT_FIGURES.subscribe_retries)
    mesh.advance(20_000)
    return sub


def detect(mesh, sub):
    answered = None
    for e in mesh.trace():
        if e.subscription_id != sub:
            continue
        if e.kind is EventKind.SUBSCRIBE_ANSWERED and answered is None:
            answered = e
        elif e.kind is EventKind.SUBSCRIBE_ATTEMPT and answered is not None:
            return (f"subscription {sub} answered at {answered.time_ms} ms, then sent attempt "
                    f"{e.attempt} at {e.time_ms} ms")
    return None


if __name__ == "__main__":
    main(prove("b12", bug_b12, scenario, detect, seeds=range(300), control=make))
