"""Shared by the planted-bug proofs: run one workload on the virtual loop (through the adapter)
under FIFO and under many seeded schedules, and report which schedules show the outcome.

Each proof states its own workload (`scenario`) and its own detector of the invariant-breaking
outcome, read off the mesh's trace (the harness's checkers are not used here)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable

from switchboard.harness_adapter import SwitchboardAdapter

from invariants.adapter import FirstChooser, SeededChooser
from invariants.trace import EventKind, TraceEvent

Scenario = Callable[[SwitchboardAdapter], object]
Detector = Callable[[SwitchboardAdapter, object], str | None]


def of(mesh: SwitchboardAdapter, kind: EventKind, **match: object) -> list[TraceEvent]:
    return [e for e in mesh.trace()
            if e.kind is kind and all(getattr(e, k) == v for k, v in match.items())]


def once(factory: Callable[..., SwitchboardAdapter], chooser: object, scenario: Scenario,
         detect: Detector) -> tuple[str | None, SwitchboardAdapter]:
    mesh = factory(chooser)
    state = scenario(mesh)
    return detect(mesh, state), mesh


def prove(name: str, factory: Callable[..., SwitchboardAdapter], scenario: Scenario,
          detect: Detector, *, seeds: Iterable[int] = range(400),
          control: Callable[..., SwitchboardAdapter] | None = None) -> int:
    """Exit status 0 when FIFO is clean and some seed shows the outcome (and the clean mesh,
    if given as `control`, never shows it under the same seeds)."""
    fifo, _ = once(factory, FirstChooser(), scenario, detect)
    print(f"{name}: FIFO: {'SHOWS IT: ' + fifo if fifo else 'clean'}")
    hits: list[int] = []
    first: tuple[int, str, SwitchboardAdapter] | None = None
    seeds = list(seeds)
    for seed in seeds:
        found, mesh = once(factory, SeededChooser(seed), scenario, detect)
        if found:
            hits.append(seed)
            if first is None:
                first = (seed, found, mesh)
    print(f"{name}: seeded schedules: {len(hits)} of {len(seeds)} show it"
          + (f" (first: seed {hits[0]})" if hits else ""))
    if first is not None:
        seed, found, mesh = first
        print(f"  seed {seed}: {found}")
        print("  " + mesh.schedule_text().replace("\n", "\n  "))
    control_hits = 0
    if control is not None:
        for seed in seeds:
            found, _ = once(control, SeededChooser(seed), scenario, detect)
            control_hits += bool(found)
        print(f"{name}: clean mesh under the same seeds: {control_hits} show it")
    ok = fifo is None and bool(hits) and control_hits == 0
    print(f"{name}: {'RACE REACHED, FIFO CLEAN' if ok else 'NOT PROVEN'}")
    return 0 if ok else 1


def main(status: int) -> None:
    sys.exit(status)
