"""Throughput of the reference mesh under a flood-like load, against a bare heapq loop.

    python benchmarks/sim_throughput.py [--rounds N] [--flood N] [--repeat N]

Load, per round: one of eight hubs (watermark 200) has its turn blocked for 1 s while a
flood of `--flood` posts arrives — a quarter can-be-ignored heartbeats, the rest
user-facing updates each with its own payload identity, every tenth through the monolith
router (a counted leg, packaging, a hop) — and the mesh then runs until idle: the shape
the state machines drive, many times over. Measured in one run (CPU time, best of
`--repeat` unless said otherwise, so other processes on the machine disturb it less; each
measurement in a fresh interpreter, the jobs interleaved):

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
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from invariants.adapter import FirstChooser, MessageSpec, Route
from invariants.trace import MessageClass
from reference_impl.adapter import ReferenceAdapter

HEARTBEAT = MessageSpec("Heartbeat", MessageClass.IGNORABLE)
HUBS = 8
CHAINS = 8


@dataclass(frozen=True)
class LoadCounts:
    posted: int  # deliveries offered by the driver
    handled: int  # deliveries whose handler ran
    events: int  # scheduler events run
    trace_events: int  # trace events (0 unless the trace was read)


def run_mesh(rounds: int, flood: int, *, record: bool, read_trace: bool = False
             ) -> LoadCounts:
    """Drive the whole load through one mesh."""
    adapter = ReferenceAdapter(FirstChooser(), record_trace=record)
    mesh = adapter.mesh
    # One round's posts (sender, payload spec, route), built once: the driver's own string
    # formatting and enum lookups are not the mesh's work, so they stay out of the loop.
    flood_posts = [
        (f"sender-{i % 5}",
         HEARTBEAT if i % 4 == 0 else MessageSpec("Update", diagnostic_key=f"node/{i}"),
         Route.MONOLITH if i % 10 == 0 else Route.DIRECT)
        for i in range(flood)
    ]
    posted = 0
    for r in range(rounds):
        hub = f"hub-{r % HUBS}"
        if hub not in mesh.hubs:
            adapter.create_hub(hub, watermark=200)
        mesh.block_hub(hub, 1_000)
        for sender, spec, route in flood_posts:
            adapter.post(sender, hub, spec, route=route)
        posted += len(flood_posts)
        adapter.run_until_idle(60_000)
    trace_events = len(adapter.trace()) if read_trace else 0
    handled = sum(h.handled_count for h in mesh.hubs.values())
    return LoadCounts(posted, handled, mesh.scheduler.events_run, trace_events)


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


JOBS = ("traced", "off", "read", "bare_handled", "bare_events", "bare_trace")


def run_job(job: str, rounds: int, flood: int, counts: LoadCounts) -> float:
    """CPU seconds of one job, run in this (fresh) process."""
    start = time.process_time()
    if job == "traced":
        run_mesh(rounds, flood, record=True)
    elif job == "off":
        run_mesh(rounds, flood, record=False)
    elif job == "read":
        run_mesh(rounds, flood, record=True, read_trace=True)
    else:
        run_bare({"bare_handled": counts.handled, "bare_events": counts.events,
                  "bare_trace": counts.trace_events}[job])
    return time.process_time() - start


def cpu_times(repeat: int, rounds: int, flood: int, counts: LoadCounts
              ) -> dict[str, list[float]]:
    """CPU time of each job in each of `repeat` rounds. Every measurement runs in a fresh
    interpreter (so one job's garbage never burdens the next) and the jobs are interleaved
    (so a change in the machine's load hits all of them alike)."""
    times: dict[str, list[float]] = {job: [] for job in JOBS}
    for _ in range(repeat):
        for job in JOBS:
            out = subprocess.run(
                [sys.executable, __file__, "--job", job, "--rounds", str(rounds),
                 "--flood", str(flood), "--counts",
                 f"{counts.handled},{counts.events},{counts.trace_events}"],
                check=True, capture_output=True, text=True,
            ).stdout
            times[job].append(float(out))
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--flood", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--job", choices=JOBS, help=argparse.SUPPRESS)
    parser.add_argument("--counts", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rounds < 1 or args.flood < 1 or args.repeat < 1:
        parser.error("--rounds, --flood and --repeat must be >= 1")
    rounds, flood = args.rounds, args.flood
    if args.job:  # one measurement, for the parent process
        handled, events, trace_events = (int(x) for x in args.counts.split(","))
        print(run_job(args.job, rounds, flood, LoadCounts(0, handled, events, trace_events)))
        return 0

    counts = run_mesh(rounds, flood, record=True, read_trace=True)
    times = cpu_times(args.repeat, rounds, flood, counts)
    t = {name: min(values) for name, values in times.items()}
    median_cost = statistics.median(times["traced"]) / statistics.median(times["off"]) - 1

    print(f"load: {rounds} rounds x {flood} posts: {counts.posted} posted, "
          f"{counts.handled} handled, {counts.events} scheduler events, "
          f"{counts.trace_events} trace events")
    for label, seconds in (("trace recorded", t["traced"]), ("trace off", t["off"])):
        print(f"mesh, {label:15} {counts.posted / seconds:10,.0f} posted/s "
              f"{counts.handled / seconds:10,.0f} handled/s "
              f"{counts.events / seconds:10,.0f} events/s")
    print(f"bare heapq loop:      {counts.handled / t['bare_handled']:10,.0f} events/s")
    print("ratios, mesh (trace recorded) per second to the bare loop's events per second:")
    print(f"  handled deliveries: {t['bare_handled'] / t['traced']:.3f} (goal >= 0.10)")
    print(f"  scheduler events:   {t['bare_events'] / t['traced']:.3f}")
    print(f"  trace events:       {t['bare_trace'] / t['traced']:.3f}")
    print(f"  handled deliveries, trace off: {t['bare_handled'] / t['off']:.3f}")
    print(f"trace recording cost: {t['traced'] / t['off'] - 1:+.1%} best of each, "
          f"{median_cost:+.1%} median of each (goal <= 30%)")
    print(f"recording and reading the trace as TraceEvents: {t['read'] / t['off'] - 1:+.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
