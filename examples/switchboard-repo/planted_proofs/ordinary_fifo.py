"""The ordinary planted bugs (and the dynamic side of the static ones) under plain FIFO timing:
each workload, run on the bugged mesh and on the clean one with FirstChooser, must show its
outcome on the first and not on the second. Exit 0 when every one does."""

from __future__ import annotations

import sys
from itertools import pairwise

from _common import of
from switchboard import harness_adapter
from switchboard.figures import DEFAULT_FIGURES as F

from invariants.adapter import Fault, FaultKind, FirstChooser, MessageSpec, Route
from invariants.trace import EventKind, MessageClass

REQUEST = MessageSpec("Request")
HEARTBEAT = MessageSpec("Heartbeat", MessageClass.IGNORABLE)
SHUTDOWN = MessageSpec("ShutdownRequest", MessageClass.LIFECYCLE)
UPDATE = MessageSpec("UpdateStream", diagnostic_key="stream/1")


def hubs(mesh, *names, **kw):
    for name in names:
        mesh.create_hub(name, **kw)


# --- workloads and detectors, one per bug -------------------------------------------------

def w_backoff(mesh):
    hubs(mesh, "h0", "client")
    sub = mesh.subscribe("client", "ghost", retries=F.subscribe_retries)
    mesh.run_until_idle(60_000)
    return sub


def d_backoff(mesh, sub):  # INV2: each resubscribe comes its backoff after the failure
    attempts = of(mesh, EventKind.SUBSCRIBE_ATTEMPT, subscription_id=sub)
    for prev, nxt in pairwise(attempts):
        answer = [e for e in of(mesh, EventKind.FAILURE_EMITTED) if e.answers == prev.delivery_id]
        if not answer:
            continue
        handled = of(mesh, EventKind.HANDLED, delivery_id=answer[0].delivery_id)
        earliest = answer[0].time_ms + F.subscribe_backoff_before(nxt.attempt)
        latest = (handled[0].time_ms if handled else answer[0].time_ms) + \
            F.subscribe_backoff_before(nxt.attempt)
        if not earliest <= nxt.time_ms <= latest:
            return (f"attempt {nxt.attempt} at {nxt.time_ms} ms, due in "
                    f"[{earliest}, {latest}] ms")
    return None


def w_end_disarm(mesh):
    hubs(mesh, "h0", "client")
    sub = mesh.subscribe("client", "ghost", retries=F.subscribe_retries)
    mesh.advance(10)  # its first attempt failed (NotFound): waiting out the backoff
    mesh.stop(graceful=True)
    mesh.run_until_idle(60_000)
    return sub


def d_end_disarm(mesh, sub):  # INV2: nothing sent for a subscription after the silo stopped
    done = of(mesh, EventKind.STOP_COMPLETED)
    if not done:
        return None
    late = [e for e in of(mesh, EventKind.SUBSCRIBE_ATTEMPT, subscription_id=sub)
            if e.seq > done[0].seq]
    return f"attempt {late[0].attempt} at {late[0].time_ms} ms after the stop" if late else None


def w_pause(mesh):
    hubs(mesh, "h0")
    mesh.inject(Fault(FaultKind.BLOCK_HUB, "h0", duration_ms=5000))
    post = mesh.post("client", "h0", REQUEST, route=Route.DIRECT)
    mesh.advance(100)
    mesh.inject(Fault(FaultKind.BLOCK_HUB, "h0", duration_ms=200))
    mesh.run_until_idle(60_000)
    return post


def d_pause(mesh, post):  # INV3: a turn held 0..5000 ms handles nothing before 5000 ms
    early = [e for e in of(mesh, EventKind.HANDLED, hub="h0") if e.time_ms < 5000]
    return f"{early[0].delivery_id} handled at {early[0].time_ms} ms" if early else None


def w_paused_callee(mesh):
    hubs(mesh, "h0", "h1", "peer")
    mesh.inject(Fault(FaultKind.BLOCK_HUB, "h1", duration_ms=5000))
    call = mesh.post("peer", "h1", REQUEST, route=Route.GRAIN)
    mesh.run_until_idle(60_000)
    return call


def d_paused_callee(mesh, call):  # INV4: refused though no rejection was armed and no stop
    refused = [e for e in of(mesh, EventKind.ATTEMPT_FAILED, delivery_id=call)
               if e.error in ("CallRefused", "CalleeClosing")]
    return f"{call} attempt {refused[0].attempt} refused ({refused[0].error})" if refused else None


def _stop_with_slow_leg(mesh, *, fast: bool):
    hubs(mesh, "h0", "h1", "peer")
    mesh.inject(Fault(FaultKind.SLOW_DESTINATION, "h1", duration_ms=5000))
    mesh.post("peer", "h1", REQUEST, route=Route.MONOLITH)  # in flight for 5002 ms
    if fast:
        mesh.post("peer", "h0", REQUEST, route=Route.MONOLITH)  # lands at 2 ms
    mesh.stop(graceful=True)


def w_single_wait(mesh):
    _stop_with_slow_leg(mesh, fast=True)
    mesh.run_until_idle(60_000)


def d_single_wait(mesh, _):  # INV5: Active left while a leg is in flight
    open_legs: set[str] = set()
    for e in mesh.trace():
        if e.kind is EventKind.LEG_STARTED:
            open_legs.add(e.leg_id)
        elif e.kind is EventKind.LEG_ENDED:
            open_legs.discard(e.leg_id)
        elif e.kind is EventKind.STOP_STAGE_LEFT and e.stage == 30 and open_legs:
            held = [x for x in of(mesh, EventKind.STOP_HOLD_RELEASED)]
            if held and held[0].reason == "budget" and e.time_ms >= F.stop_budget_ms:
                return None
            return f"Active left at {e.time_ms} ms with {sorted(open_legs)} in flight"
    return None


def w_give_up(mesh):
    _stop_with_slow_leg(mesh, fast=False)
    mesh.advance(1000)
    mesh.stop(graceful=False)  # the host gives up
    mesh.run_until_idle(60_000)


def d_give_up(mesh, _):  # INV5: nothing held once the host gave up
    left = [e for e in of(mesh, EventKind.STOP_STAGE_LEFT) if e.stage == 30]
    if left and left[0].time_ms > 1000:
        return f"Active held until {left[0].time_ms} ms, the host gave up at 1000 ms"
    return None


def w_badge_key(mesh):
    hubs(mesh, "h0", breaker_threshold=8)
    for _ in range(8):
        mesh.post("owner", "h0", UPDATE, route=Route.DIRECT)
    other = mesh.post("co-owner", "h0", UPDATE, route=Route.DIRECT)
    mesh.run_until_idle(60_000)
    return other


def d_badge_key(mesh, other):  # INV6: another sender's one post is on a key of its own
    hit = of(mesh, EventKind.DROPPED, delivery_id=other) + \
        of(mesh, EventKind.BREAKER_TRIPPED, delivery_id=other)
    return f"{other} from co-owner dropped after owner's 8 posts" if hit else None


def w_control_first(mesh):
    hubs(mesh, "h0")
    posts = [mesh.post("client", "h0", REQUEST, route=Route.DIRECT),
             mesh.post("client", "h0", SHUTDOWN, route=Route.DIRECT)]
    mesh.run_until_idle(60_000)
    return posts


def d_control_first(mesh, posts):  # INV7: one sender's direct posts handled in order
    handled = [e.delivery_id for e in of(mesh, EventKind.HANDLED, hub="h0")
               if e.delivery_id in posts]
    return f"handled {handled}, posted {posts}" if handled and handled != posts else None


def w_anonymous(mesh):
    hubs(mesh, "h0", "client")
    anon = mesh.post("client", "h0", REQUEST, identity=None, route=Route.MONOLITH)
    mesh.run_until_idle(60_000)
    return anon


def d_anonymous(mesh, anon):  # INV1: an anonymous post is rejected, never queued
    queued = of(mesh, EventKind.ENQUEUED, delivery_id=anon)
    return f"anonymous {anon} enqueued at {queued[0].hub}" if queued else None


# The dynamic side of the static ones.

def w_chatter_answered(mesh):
    hubs(mesh, "h0", "peer")
    beat = mesh.post("peer", "nowhere", HEARTBEAT, route=Route.MONOLITH)
    mesh.run_until_idle(60_000)
    return beat


def d_chatter_answered(mesh, beat):  # INV7: a can-be-ignored delivery is never answered
    ans = [e for e in of(mesh, EventKind.FAILURE_EMITTED) if e.answers == beat]
    return f"heartbeat {beat} answered {ans[0].error}" if ans else None


def w_loose_nack(mesh):
    hubs(mesh, "h0", "peer")
    mesh.post("peer", "nowhere", REQUEST, route=Route.MONOLITH)
    mesh.advance(3)  # landed at 2 ms, answered NotFound: the answer's nack leg in flight
    mesh.stop(graceful=False)
    mesh.run_until_idle(60_000)


def d_loose_nack(mesh, _):  # INV5: nothing routing-related after the stop completed
    done = of(mesh, EventKind.STOP_COMPLETED)
    if not done:
        return None
    late = [e for e in mesh.trace() if e.seq > done[0].seq and (
        (e.kind is EventKind.POSTED and e.packaged) or e.kind in (
            EventKind.LEG_STARTED, EventKind.LEG_ENDED, EventKind.FAILURE_EMITTED))]
    return f"{late[0].kind.name} of {late[0].delivery_id} after the stop" if late else None


def w_resend(mesh):
    hubs(mesh, "h0", "h1", "peer")
    mesh.inject(Fault(FaultKind.TIMEOUT_NEXT, "h1"))
    call = mesh.post("peer", "h1", REQUEST, route=Route.GRAIN)
    mesh.run_until_idle(60_000)
    return call


def d_resend(mesh, call):  # INV4: a timed-out delivery is never sent again
    timed_out = [e for e in of(mesh, EventKind.ATTEMPT_FAILED, delivery_id=call) if e.timed_out]
    again = [e for e in of(mesh, EventKind.ATTEMPT, delivery_id=call)
             if timed_out and e.seq > timed_out[0].seq]
    return f"{call} sent again (attempt {again[0].attempt}) after timing out" if again else None


CASES = [
    ("b01", "ordinary", "INV2", w_backoff, d_backoff),
    ("b03", "ordinary", "INV3", w_pause, d_pause),
    ("b04", "ordinary", "INV6", w_badge_key, d_badge_key),
    ("b06", "ordinary", "INV4", w_paused_callee, d_paused_callee),
    ("b07", "ordinary", "INV5", w_single_wait, d_single_wait),
    ("b08", "ordinary", "INV7", w_control_first, d_control_first),
    ("b09", "ordinary", "INV2", w_end_disarm, d_end_disarm),
    ("b13", "ordinary", "INV1", w_anonymous, d_anonymous),
    ("b14", "ordinary", "INV5", w_give_up, d_give_up),
    ("b05", "static (dynamic side)", "INV7", w_chatter_answered, d_chatter_answered),
    ("b10", "static (dynamic side)", "INV5", w_loose_nack, d_loose_nack),
    ("b15", "static (dynamic side)", "INV4", w_resend, d_resend),
]


def main() -> int:
    bad = 0
    for name, kind, inv, work, detect in CASES:
        bugged = getattr(harness_adapter, f"bug_{name}")(FirstChooser())
        shown = detect(bugged, work(bugged))
        clean = harness_adapter.make(FirstChooser())
        control = detect(clean, work(clean))
        ok = bool(shown) and not control
        bad += not ok
        print(f"{name} [{kind}, {inv}] FIFO: {shown or 'NOT SHOWN'}; clean: {control or 'clean'}"
              f"{'' if ok else '   <-- FAIL'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
