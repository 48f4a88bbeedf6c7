"""Shared by the planted-fault proofs: run one workload through the adapter on the harness's
virtual loop, with the faulty factory and with the clean `make`, under FIFO and under seeded
schedules, and report which runs show the outcome.

Each proof states its own workload (`scenario`) and its own detector of the outcome that
breaks the invariant, read off the trace (the harness's checkers are not used here)."""

from __future__ import annotations

import random
import sys
from collections.abc import Callable, Iterable, Sequence

from invariants.adapter import Chooser, FirstChooser, SeededChooser
from invariants.trace import EventKind, TraceEvent

from nodemesh.harness_adapter import NodeMeshAdapter

Factory = Callable[..., NodeMeshAdapter]
Scenario = Callable[[NodeMeshAdapter], object]
Detector = Callable[[NodeMeshAdapter, object], str | None]


class OrderChooser:
    """Random answers to the loop's ordering questions (which lands next at an instant),
    the nominal answer (0) to the network's verdicts: a healthy network, schedules varied."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self._random = random.Random(seed)

    def choose(self, options: int, why: str) -> int:
        if why.startswith("verdict"):
            return 0
        return self._random.randrange(options)


def of(mesh: NodeMeshAdapter, kind: EventKind, **match: object) -> list[TraceEvent]:
    return [e for e in mesh.trace()
            if e.kind is kind and all(getattr(e, k) == v for k, v in match.items())]


def answers_to(mesh: NodeMeshAdapter, delivery: str) -> list[TraceEvent]:
    return of(mesh, EventKind.FAILURE_EMITTED, answers=delivery)


def once(factory: Factory, chooser: object, scenario: Scenario,
         detect: Detector) -> tuple[str | None, NodeMeshAdapter]:
    mesh = factory(chooser)
    state = scenario(mesh)
    return detect(mesh, state), mesh


def prove_network(name: str, factory: Factory, control: Factory, scenario: Scenario,
                  detect: Detector, *, without: Scenario | None = None,
                  seeds: Iterable[int] = range(20)) -> int:
    """A fault that needs the network's fault: shown by `factory` under FIFO (and counted
    under seeded schedules, whose network verdicts vary too), never by `control` under the
    same choosers; and (if `without` is given, the same workload on a healthy network:
    every segment delivered nominally) not by `factory` without the network's fault."""
    seeds = list(seeds)
    fifo, _ = once(factory, FirstChooser(), scenario, detect)
    print(f"{name}: FIFO, with the network fault: {'shows it: ' + fifo if fifo else 'clean'}")
    hits = sum(bool(once(factory, SeededChooser(s), scenario, detect)[0]) for s in seeds)
    print(f"{name}: seeded schedules, with the network fault: {hits} of {len(seeds)} show it")
    clean = sum(bool(once(control, c, scenario, detect)[0])
                for c in [FirstChooser(), *(SeededChooser(s) for s in seeds)])
    print(f"{name}: clean mesh, same workload, FIFO and the same seeds: {clean} show it")
    healthy = 0
    if without is not None:
        healthy = sum(bool(once(factory, c, without, detect)[0])
                      for c in [FirstChooser(), *(OrderChooser(s) for s in seeds)])
        print(f"{name}: faulty mesh, healthy network (nominal verdicts), FIFO and "
              f"{len(seeds)} ordering-only schedules: {healthy} show it")
    ok = bool(fifo) and clean == 0 and healthy == 0
    print(f"{name}: {'SHOWN WITH THE NETWORK FAULT ONLY' if ok else 'NOT PROVEN'}")
    return 0 if ok else 1


def prove_race(name: str, factory: Factory, control: Factory, scenario: Scenario,
               detect: Detector, *, choosers: Sequence[Chooser]) -> int:
    """A race: FIFO clean (with the same faults), some of `choosers` (each ordering the
    events of an instant its own way) show it, the clean mesh under them never does."""
    fifo, _ = once(factory, FirstChooser(), scenario, detect)
    print(f"{name}: FIFO: {'SHOWS IT: ' + fifo if fifo else 'clean'}")
    hits: list[int] = []
    first: tuple[int, str, NodeMeshAdapter] | None = None
    for index, chooser in enumerate(choosers):
        found, mesh = once(factory, chooser, scenario, detect)
        if found:
            hits.append(index)
            if first is None:
                first = (index, found, mesh)
    print(f"{name}: other schedules: {len(hits)} of {len(choosers)} show it"
          + (f" (first: #{hits[0]})" if hits else ""))
    if first is not None:
        index, found, mesh = first
        print(f"  #{index}: {found}")
        print("  " + mesh.schedule_text().replace("\n", "\n  "))
    clean = sum(bool(once(control, type(c)(*_args(c)), scenario, detect)[0])
                for c in choosers)
    print(f"{name}: clean mesh under the same schedules: {clean} show it")
    ok = fifo is None and bool(hits) and clean == 0
    print(f"{name}: {'RACE REACHED, FIFO CLEAN' if ok else 'NOT PROVEN'}")
    return 0 if ok else 1


def _args(chooser: Chooser) -> tuple[int, ...]:
    """A fresh copy's arguments: the seed of a seeded chooser."""
    seed = getattr(chooser, "seed", None)
    return () if seed is None else (seed,)


def main(status: int) -> None:
    sys.exit(status)
