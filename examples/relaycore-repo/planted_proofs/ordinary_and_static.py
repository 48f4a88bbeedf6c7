"""The ordinary and static switches, each shown under FIFO (FirstChooser) by a small
workload, with the clean relay as the control (the same workload, nothing found).

Not races: these need no schedule but the stock one, only the right workload. The static
ones are found by the scan whatever the switch; switched on, each also misbehaves, shown
here. Exit status 0 when every switch shows its finding and the clean relay shows none.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from _common import Factory, after_stop
from invariants.adapter import Fault, FaultKind, FirstChooser, MessageSpec, Route
from invariants.trace import EventKind, MessageClass, TraceEvent

from relaycore import harness_adapter as adapters

Events = list[TraceEvent]


def of(trace: Events, kind: EventKind, did: str | None = None) -> Events:
    return [e for e in trace if e.kind is kind and (did is None or e.delivery_id == did)]


def b01(factory: Factory) -> list[str]:
    """A subscription to a hub whose turn is held past every attempt: each resubscribe is
    owed 4 s (the timeout) plus its backoff after the attempt before it."""
    mesh = factory(FirstChooser())
    mesh.create_hub("h0")
    mesh.inject(Fault(FaultKind.BLOCK_HUB, "h0", duration_ms=600_000))
    mesh.subscribe("client", "h0", retries=5)
    mesh.run_until_idle(600_000)
    times = [e.time_ms for e in of(mesh.trace(), EventKind.SUBSCRIBE_ATTEMPT)]
    return [f"attempt {n} came {b - a} ms after attempt {n - 1} (owed {4000 + 200 * 2 ** (n - 1)})"
            for n, (a, b) in enumerate(zip(times, times[1:], strict=False), start=1)
            if b - a != 4000 + 200 * 2 ** (n - 1)]


def b03(factory: Factory) -> list[str]:
    """A call the callee holds (timeout_next), then a non-graceful stop: deactivation must
    drop the held call."""
    mesh = factory(FirstChooser())
    mesh.create_hub("h0")
    mesh.inject(Fault(FaultKind.TIMEOUT_NEXT, "h0"))
    mesh.post("client", "h0", MessageSpec("Charge"), route=Route.GRAIN)
    mesh.advance(100)
    mesh.stop(graceful=False)
    mesh.run_until_idle(600_000)
    return after_stop(mesh.trace())


def b04(factory: Factory) -> list[str]:
    """A key filled to its threshold (3) at 0 ms, tripped at 499 ms: it is dropped until
    1999 ms."""
    mesh = factory(FirstChooser())
    mesh.create_hub("h0", breaker_threshold=3)
    spec = MessageSpec("Sync", diagnostic_key="s/1")
    for _ in range(3):
        mesh.post("owner", "h0", spec, route=Route.DIRECT)
    mesh.advance(499)
    mesh.post("owner", "h0", spec, route=Route.DIRECT)  # the 4th in its window: trips
    mesh.advance(1498)
    early = mesh.post("owner", "h0", spec, route=Route.DIRECT)  # 1997 ms: still cooling
    mesh.run_until_idle(600_000)
    return [f"{early} enqueued at {e.time_ms} ms, before the cooldown from the trip at 499 ms "
            f"ended (1999 ms)" for e in of(mesh.trace(), EventKind.ENQUEUED, early)]


def b06(factory: Factory) -> list[str]:
    """A grain post without identity: rejected once and dropped."""
    mesh = factory(FirstChooser())
    mesh.create_hub("h0")
    did = mesh.post("client", "h0", MessageSpec("Charge"), identity=None, route=Route.GRAIN)
    mesh.run_until_idle(600_000)
    trace = mesh.trace()
    rejected = of(trace, EventKind.REJECTED, did)
    found = [f"{did} rejected {len(rejected)} times"] if len(rejected) > 1 else []
    found += [f"{did} answered {e.error}" for e in trace
              if e.kind is EventKind.FAILURE_EMITTED and e.answers == did]
    return found


def b07(factory: Factory) -> list[str]:
    """Heartbeats to a held hub with a watermark of 2: none queued at a depth of 2 or more."""
    mesh = factory(FirstChooser())
    mesh.create_hub("h0", watermark=2)
    mesh.inject(Fault(FaultKind.BLOCK_HUB, "h0", duration_ms=1000))
    for n in range(4):
        mesh.post("peer", "h0", MessageSpec("Heartbeat", MessageClass.IGNORABLE,
                                            diagnostic_key=f"b{n}"), route=Route.DIRECT)
    mesh.run_until_idle(600_000)
    return [f"heartbeat {e.delivery_id} enqueued at depth {e.depth - 1} (watermark 2)"
            for e in of(mesh.trace(), EventKind.ENQUEUED) if e.depth - 1 >= 2]


def b09(factory: Factory) -> list[str]:
    """A heartbeat sent as a grain call to a node that does not exist: never answered."""
    mesh = factory(FirstChooser())
    did = mesh.post("client", "ghost", MessageSpec("Heartbeat", MessageClass.IGNORABLE),
                    route=Route.GRAIN)
    mesh.run_until_idle(600_000)
    return [f"can-be-ignored {did} answered {e.error}" for e in mesh.trace()
            if e.kind is EventKind.FAILURE_EMITTED and e.answers == did]


def b10(factory: Factory) -> list[str]:
    """A graceful stop holding two legs slower than its budget: the residual legs are
    named oldest first."""
    mesh = factory(FirstChooser())
    for hub in ("h0", "h1"):
        mesh.create_hub(hub)
        mesh.inject(Fault(FaultKind.SLOW_DESTINATION, hub, duration_ms=45_000))
    mesh.post("client", "h0", MessageSpec("Order"))
    mesh.post("client", "h1", MessageSpec("Order"))
    mesh.advance(1)
    started = [e.leg_id for e in of(mesh.trace(), EventKind.LEG_STARTED)]
    mesh.stop(graceful=True)
    mesh.run_until_idle(600_000)
    named = [e.leg_id for e in of(mesh.trace(), EventKind.RESIDUAL_LEG)]
    return [f"residual legs named {named}, started {started}"] if named != started else []


def b11(factory: Factory) -> list[str]:
    """A grain call, then a rejection armed at its target, then a second call, all in one
    instant: the rejection is the second call's (the next ATTEMPT after it was armed)."""
    mesh = factory(FirstChooser())
    mesh.create_hub("h0")
    first = mesh.post("client", "h0", MessageSpec("Charge"), route=Route.GRAIN)
    mesh.inject(Fault(FaultKind.REJECT_NEXT, "h0"))
    second = mesh.post("client", "h0", MessageSpec("Charge"), route=Route.GRAIN)
    mesh.run_until_idle(600_000)
    trace = mesh.trace()
    armed = of(trace, EventKind.FAULT_INJECTED)[0].seq
    spent = next(e.delivery_id for e in trace if e.kind is EventKind.ATTEMPT and e.seq > armed)
    found = [f"{e.delivery_id} refused ({e.error}), but the rejection armed at seq {armed} "
             f"was {spent}'s, the next ATTEMPT" for e in of(trace, EventKind.ATTEMPT_FAILED)
             if e.delivery_id != spent and not e.timed_out]
    found += [f"{spent} reached the callee though the rejection was its"
              for e in of(trace, EventKind.CALL_RECEIVED, spent) if e.attempt == 0]
    del first, second
    return found


def b13(factory: Factory) -> list[str]:
    """A grain call refused every time: re-sent after 100, 200, 400, 800, 1000 ms."""
    mesh = factory(FirstChooser())
    mesh.create_hub("h0")
    mesh.inject(Fault(FaultKind.REJECT_NEXT, "h0", count=100))
    mesh.post("client", "h0", MessageSpec("Charge"), route=Route.GRAIN)
    mesh.run_until_idle(600_000)
    times = [e.time_ms for e in of(mesh.trace(), EventKind.ATTEMPT)]
    return [f"attempts at {times}"] if times != [0, 100, 300, 700, 1500, 2500] else []


def b14(factory: Factory) -> list[str]:
    """A grain call to a callee slowed past the response timeout: timed out, never re-sent."""
    mesh = factory(FirstChooser())
    mesh.create_hub("h0")
    mesh.inject(Fault(FaultKind.SLOW_DESTINATION, "h0", duration_ms=9000))
    did = mesh.post("client", "h0", MessageSpec("Charge"), route=Route.GRAIN)
    mesh.run_until_idle(600_000)
    trace = mesh.trace()
    received = of(trace, EventKind.CALL_RECEIVED, did)
    attempts = of(trace, EventKind.ATTEMPT, did)
    return ([f"{did} attempted {len(attempts)} times after timing out, received "
             f"{len(received)} times"] if len(attempts) > 1 else [])


def b15(factory: Factory) -> list[str]:
    """A heartbeat then a request, straight from one sender to a held hub: handled in
    the order posted."""
    mesh = factory(FirstChooser())
    mesh.create_hub("h0")
    mesh.inject(Fault(FaultKind.BLOCK_HUB, "h0", duration_ms=1000))
    beat = mesh.post("peer", "h0", MessageSpec("Heartbeat", MessageClass.IGNORABLE),
                     route=Route.DIRECT)
    probe = mesh.post("peer", "h0", MessageSpec("Probe"), route=Route.DIRECT)
    mesh.run_until_idle(600_000)
    handled = [e.delivery_id for e in of(mesh.trace(), EventKind.HANDLED)]
    return [f"handled {handled}, posted {[beat, probe]}"] if handled != [beat, probe] else []


def b17(factory: Factory) -> list[str]:
    """A non-graceful stop, then a routed post: refused, no leg starts."""
    mesh = factory(FirstChooser())
    mesh.create_hub("h0")
    mesh.stop(graceful=False)
    did = mesh.post("client", "h0", MessageSpec("Order"))
    mesh.run_until_idle(600_000)
    return [f"leg {e.leg_id} of {did} started after the stop was asked for"
            for e in of(mesh.trace(), EventKind.LEG_STARTED, did)]


SHOWS: dict[str, Callable[[Factory], list[str]]] = {
    "b01": b01, "b03": b03, "b04": b04, "b06": b06, "b07": b07, "b09": b09, "b10": b10,
    "b11": b11, "b13": b13, "b14": b14, "b15": b15, "b17": b17,
}


def main() -> int:
    ok = True
    for name, show in SHOWS.items():
        control = show(adapters.make)
        found = show(getattr(adapters, f"bug_{name}"))
        good = bool(found) and not control
        ok = ok and good
        print(f"{name}: {'shown' if good else 'NOT SHOWN'}: "
              f"{found[0] if found else 'nothing'}"
              + (f"  [control found: {control[0]}]" if control else ""))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
