"""Shared by the proof scripts: drive a program of adapter steps under many schedules.

A *program* takes a chooser, builds a mesh through one of relaycore's adapter factories,
runs its steps on the harness's virtual loop (`invariants.aio.VirtualLoop`, default
legality) and returns what it found wrong in the trace, one line per finding (empty when
nothing). `prove` runs it under FIFO (`FirstChooser`), under `SeededChooser(seed)` for many
seeds, and, where the seeds find nothing, under an exhaustive script chooser over the
choices of one instant (FIFO everywhere else); it exits 0 when some legal schedule shows
the finding and FIFO does not.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from invariants.adapter import Chooser, FirstChooser, SeededChooser
from invariants.trace import EventKind, TraceEvent

Factory = Callable[[Chooser], Any]
Program = Callable[[Chooser, Factory], list[str]]

# What must not follow a completed stop (docs/dynamic-invariants.md, INV5).
AFTER_STOP = frozenset({
    EventKind.LEG_STARTED, EventKind.LEG_ENDED, EventKind.ATTEMPT, EventKind.ATTEMPT_FAILED,
    EventKind.CALL_RECEIVED, EventKind.FAILURE_EMITTED,
})


class Recorder:
    """A chooser answering a script of choices (then 0, the FIFO choice) and keeping a log."""

    def __init__(self, script: Sequence[int] = (), only: str | None = None) -> None:
        self.script = list(script)
        self.only = only  # answer from the script only where `why` names this text
        self.log: list[tuple[int, int, str]] = []  # (options, answer, why) of scripted choices

    def choose(self, options: int, why: str) -> int:
        if self.only is not None and self.only not in why:
            return 0
        answer = self.script[len(self.log)] if len(self.log) < len(self.script) else 0
        answer = min(answer, options - 1)
        self.log.append((options, answer, why))
        return answer


def after_stop(trace: Sequence[TraceEvent]) -> list[str]:
    """Routing events (and packaged landings) after STOP_COMPLETED."""
    done = next((e.seq for e in trace if e.kind is EventKind.STOP_COMPLETED), None)
    if done is None:
        return []
    return [f"seq {e.seq} @ {e.time_ms} ms: {e.kind.value} {e.delivery_id} at {e.hub} after "
            f"the stop completed (seq {done})"
            for e in trace[done + 1:]
            if e.kind in AFTER_STOP or (e.kind is EventKind.POSTED and e.packaged)]


def exhaustive(program: Program, factory: Factory, only: str,
               limit: int = 5000) -> tuple[int, list[str], str]:
    """Every schedule of the choices whose `why` names `only` (FIFO elsewhere), depth first.

    Returns (schedules run, the first findings, the schedule that showed them)."""
    stack: list[list[int]] = [[]]
    runs = 0
    while stack and runs < limit:
        prefix = stack.pop()
        chooser = Recorder(prefix, only)
        found = program(chooser, factory)
        runs += 1
        if found:
            shown = "; ".join(f"{why} -> option {answer} of {options}"
                              for options, answer, why in chooser.log if answer)
            return runs, found, shown
        answers = [answer for _, answer, _ in chooser.log]
        for index in range(len(prefix), len(chooser.log)):
            options = chooser.log[index][0]
            for alternative in range(options - 1, 0, -1):
                stack.append(answers[:index] + [alternative])
    return runs, [], ""


def prove(name: str, program: Program, factory: Factory, *,
          seeds: Iterable[int] = range(200), instant: str | None = None) -> int:
    """FIFO clean, and some legal schedule shows the finding: exit status 0.

    The same seeds (and the same exhaustive search) run on the clean relay first, as the
    control: the finding must be the switch's, not the program's."""
    from relaycore.harness_adapter import make

    seeds = list(seeds)
    control = [seed for seed in seeds if program(SeededChooser(seed), make)]
    if instant is not None:
        control_runs, control_found, _ = exhaustive(program, make, instant)
    else:
        control_runs, control_found = 0, []
    print(f"{name}: control (clean relay): {len(control)} of {len(seeds)} seeds"
          + (f", {control_runs} exhaustive schedule(s)" if instant is not None else "")
          + (" show it" if control or control_found else ", all clean"))
    fifo = program(FirstChooser(), factory)
    print(f"{name}: FIFO (FirstChooser): {'; '.join(fifo) if fifo else 'clean'}")
    hits = []
    first: list[str] = []
    for seed in seeds:
        found = program(SeededChooser(seed), factory)
        if found:
            hits.append(seed)
            first = first or found
    print(f"{name}: SeededChooser: {len(hits)} of {len(seeds)} seeds show it"
          + (f" (first seeds {hits[:8]}): {first[0]}" if hits else ""))
    reached = bool(hits)
    if instant is not None:
        runs, found, shown = exhaustive(program, factory, instant)
        print(f"{name}: exhaustive over the choices at {instant!r}: "
              + (f"shown after {runs} schedule(s): {found[0]}\n    by: {shown}" if found
                 else f"not shown in {runs} schedule(s)"))
        reached = reached or bool(found)
    ok = reached and not fifo and not control and not control_found
    print(f"{name}: {'RACE REACHED, FIFO CLEAN' if ok else 'NOT PROVEN'}")
    return 0 if ok else 1


def main(name: str, program: Program, factory: Factory, **kwargs: Any) -> None:
    sys.exit(prove(name, program, factory, **kwargs))
