"""FIFO sweep: random workloads of harness-like steps, run under FirstChooser on the clean
relay and on each race switch; a race switch must give the clean relay's trace under FIFO
(or, where the switch changes what FIFO does without breaking anything, none of its own
findings). `PYTHONPATH=src python3 planted_proofs/fifo_sweep.py [workloads] [seed]`.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable

from _common import after_stop
from invariants.adapter import Fault, FaultKind, FirstChooser, MessageSpec, Route
from invariants.trace import EventKind, MessageClass, TraceEvent

from relaycore import harness_adapter as adapters

HUBS = ("h0", "h1", "h2")
TARGETS = (*HUBS, "ghost", "h0/gone")
SENDERS = ("client", "peer", "owner")
CLASSES = (MessageClass.USER, MessageClass.USER, MessageClass.IGNORABLE,
           MessageClass.LIFECYCLE, MessageClass.FAILURE, MessageClass.SYSTEM)
ROUTES = (Route.DIRECT, Route.MONOLITH, Route.GRAIN)
# The relay's own waits, less its hops: where two things fall due in one instant.
DURATIONS = (100, 1000, 3996, 3998, 4000, 5000, 7998, 7999, 8000, 15_000, 45_000)
ADVANCES = (1, 2, 4, 100, 200, 1000, 3996, 4000, 8000, 15_000, 31_000)


def workload(rng: random.Random) -> list[tuple[str, tuple[object, ...]]]:
    steps: list[tuple[str, tuple[object, ...]]] = []
    stopped = False
    for _ in range(rng.randint(3, 14)):
        roll = rng.random()
        if roll < 0.35:
            steps.append(("post", (rng.choice(SENDERS), rng.choice(TARGETS), rng.choice(CLASSES),
                                   rng.choice(ROUTES), rng.random() < 0.15,
                                   f"k{rng.randint(0, 3)}")))
        elif roll < 0.45:
            steps.append(("subscribe", (rng.choice(SENDERS), rng.choice(TARGETS))))
        elif roll < 0.65:
            kind = rng.choice((FaultKind.BLOCK_HUB, FaultKind.SLOW_DESTINATION,
                               FaultKind.REJECT_NEXT, FaultKind.TIMEOUT_NEXT,
                               FaultKind.AGGREGATE_NEXT, FaultKind.REMOVE_TARGET))
            steps.append(("inject", (kind, rng.choice(HUBS), rng.choice(DURATIONS),
                                     rng.randint(1, 2), rng.random() < 0.5)))
        elif roll < 0.72 and not stopped:
            stopped = True
            steps.append(("stop", (rng.random() < 0.6,)))
            if rng.random() < 0.3:
                steps.append(("stop", (False,)))
        else:
            steps.append(("advance", (rng.choice(ADVANCES),)))
    return steps


def run(factory: Callable[..., object], steps: list[tuple[str, tuple[object, ...]]]
        ) -> list[TraceEvent]:
    mesh = factory(FirstChooser())
    for hub in HUBS:
        mesh.create_hub(hub, watermark=4)  # type: ignore[attr-defined]
    for step, args in steps:
        if step == "post":
            sender, target, cls, route, anonymous, key = args
            mesh.post(sender, target, MessageSpec("Note", cls, diagnostic_key=key),  # type: ignore[attr-defined]
                      identity=None if anonymous else "user", route=route)
        elif step == "subscribe":
            mesh.subscribe(*args, retries=5)  # type: ignore[attr-defined]
        elif step == "inject":
            kind, target, duration, count, first = args
            mesh.inject(Fault(kind, target, duration_ms=duration, count=count,  # type: ignore[attr-defined]
                              timeout_first=first))
        elif step == "stop":
            mesh.stop(graceful=args[0])  # type: ignore[attr-defined]
        else:
            mesh.advance(args[0])  # type: ignore[attr-defined]
    mesh.run_until_idle(600_000)  # type: ignore[attr-defined]
    return list(mesh.trace())  # type: ignore[attr-defined]


def b02_findings(trace: list[TraceEvent]) -> list[str]:
    """A refusal no reject_next explains: any refused attempt of a target with no
    rejection or aggregate armed."""
    armed = {e.target for e in trace if e.kind is EventKind.FAULT_INJECTED
             and e.reason in ("reject_next", "aggregate_next", "remove_target")}
    return [f"{e.delivery_id} refused" for e in trace
            if e.kind is EventKind.ATTEMPT_FAILED and e.error == "CallRefused"
            and not any(a.kind is EventKind.ATTEMPT and a.delivery_id == e.delivery_id
                        and a.target in armed for a in trace)]


def main(count: int, seed: int) -> int:
    rng = random.Random(seed)
    same = ("b05", "b08", "b12", "b16")
    bad = events = 0
    for index in range(count):
        steps = workload(rng)
        clean = run(adapters.make, steps)
        events += len(clean)
        assert not b02_findings(clean), (index, steps)
        for name in same:
            trace = run(getattr(adapters, f"bug_{name}"), steps)
            if trace != clean:
                bad += 1
                print(f"workload {index}: {name} differs from the clean relay under FIFO: {steps}")
        trace = run(adapters.bug_b02, steps)
        if b02_findings(trace) or after_stop(trace) != after_stop(clean):
            bad += 1
            print(f"workload {index}: b02 shows under FIFO: {steps}")
    print(f"{count} workloads ({events} events on the clean relay), seed {seed}: "
          f"{bad} FIFO difference(s)")
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 1500,
                  int(sys.argv[2]) if len(sys.argv) > 2 else 7))
