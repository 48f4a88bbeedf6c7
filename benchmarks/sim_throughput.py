"""Throughput of the reference mesh under a flood-like load, against a bare heapq loop.

    python benchmarks/sim_throughput.py [--rounds N] [--flood N] [--repeat N]

Load, per round: one of eight hubs (watermark 200) has its turn blocked for 1 s while a
flood of `--flood` posts arrives — a quarter can-be-ignored heartbeats, the rest
user-facing updates each with its own payload identity, every tenth through the monolith
router (a counted leg, packaging, a hop) — and the mesh then runs until idle: the shape
the state machines drive, many times over. Measured in one run (CPU time, best of
`--repeat`, so other processes on the machine disturb it less):

* the mesh with trace recording and without it: deliveries posted, deliveries handled
  and scheduler events per second;
* a bare `heapq` event loop ((time, seq, callback, args) entries, a `schedule` function,
  eight chains of callbacks that each schedule the next) running as many events as the
  mesh handled deliveries, and as many as its scheduler ran; the ratio mesh/bare per
  second, goal >= 0.10;
* the cost of trace recording, goal <= 30 % (and, for information, recording plus turning
  the records into TraceEvents, which happens only when a trace is read).

A script, not a test: timings depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import heapq
import itertools
import time
from collections.abc import Callable

from invariants.adapter import FirstChooser, MessageSpec, Route
from invariants.trace import MessageClass
from reference_impl.adapter import ReferenceAdapter

HEARTBEAT = MessageSpec("Heartbeat", MessageClass.IGNORABLE)
HUBS = 8
CHAINS = 8


def run_mesh(rounds: int, flood: int, *, record: bool, read_trace: bool = False
             ) -> tuple[int, int, int]:
    """(deliveries posted, deliveries handled, scheduler events) for the whole load."""
    adapter = ReferenceAdapter(FirstChooser(), record_trace=record)
    mesh = adapter.mesh
    specs = [HEARTBEAT if i % 4 == 0 else MessageSpec("Update", diagnostic_key=f"node/{i}")
             for i in range(flood)]
    posted = 0
    for r in range(rounds):
        hub = f"hub-{r % HUBS}"
        if hub not in mesh.hubs:
            adapter.create_hub(hub, watermark=200)
        mesh.block_hub(hub, 1_000)
        for i, spec in enumerate(specs):
            route = Route.MONOLITH if i % 10 == 0 else Route.DIRECT
            adapter.post(f"sender-{i % 5}", hub, spec, route=route)
            posted += 1
        adapter.run_until_idle(60_000)
    if read_trace:
        adapter.trace()
    handled = sum(h.handled_count for h in mesh.hubs.values())
    return posted, handled, mesh.scheduler.events_run


def run_bare(events: int) -> None:
    """`events` events through a bare heapq event loop: (time, seq, callback, args) entries,
    a `schedule` function, and callbacks that each schedule their chain's next event."""
    heap: list[tuple[int, int, Callable[..., None], tuple[int, ...]]] = []
    counter = itertools.count()
    left = [events]

    def schedule(due: int, callback: Callable[..., None], *args: int) -> None:
        heapq.heappush(heap, (due, next(counter), callback, args))

    def tick(now: int, chain: int) -> None:
        left[0] -= 1
        if left[0] >= CHAINS:
            schedule(now + 1, tick, now + 1, chain)

    for chain in range(min(CHAINS, events)):
        schedule(0, tick, 0, chain)
    while heap:
        _, _, callback, args = heapq.heappop(heap)
        callback(*args)


def best_of(repeat: int, job: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        job()
        best = min(best, time.process_time() - start)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--flood", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if args.rounds < 1 or args.flood < 1 or args.repeat < 1:
        parser.error("--rounds, --flood and --repeat must be >= 1")

    posted, handled, events = run_mesh(args.rounds, args.flood, record=True)
    traced = best_of(args.repeat, lambda: run_mesh(args.rounds, args.flood, record=True))
    untraced = best_of(args.repeat, lambda: run_mesh(args.rounds, args.flood, record=False))
    read = best_of(args.repeat, lambda: run_mesh(args.rounds, args.flood, record=True,
                                                  read_trace=True))
    bare_handled = best_of(args.repeat, lambda: run_bare(handled))
    bare_events = best_of(args.repeat, lambda: run_bare(events))

    print(f"load: {args.rounds} rounds x {args.flood} posts: {posted} posted, "
          f"{handled} handled, {events} scheduler events")
    for label, seconds in (("trace recorded", traced), ("trace off", untraced)):
        print(f"mesh, {label:15} {posted / seconds:10,.0f} posted/s "
              f"{handled / seconds:10,.0f} handled/s {events / seconds:10,.0f} events/s")
    print(f"bare heapq loop:     {handled / bare_handled:10,.0f} events/s")
    print(f"ratio handled deliveries/s (traced) to bare events/s: "
          f"{bare_handled / traced:.3f} (goal >= 0.10)")
    print(f"ratio scheduler events/s (traced) to bare events/s:   "
          f"{bare_events / traced:.3f}")
    print(f"ratio handled deliveries/s (trace off) to bare:        "
          f"{bare_handled / untraced:.3f}")
    print(f"trace recording cost: {traced / untraced - 1:+.1%} (goal <= 30%)")
    print(f"recording and reading the trace as TraceEvents: {read / untraced - 1:+.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
