"""The aiomesh example's planted bugs, each found by the harness on the real asyncio code.

    python benchmarks/aiomesh_races.py [--seeds N] [--max-examples N] [--bugs a,b]
                                       [--stock-scale S]

Per planted bug (examples/aiomesh-repo/src/aiomesh/bugs.py), the invariant it breaks is
run through the example's adapter (`aiomesh.harness_adapter`, its `[tool.harness.params]`):

- **examples**: examples to the first failure (the check's seed programs first, each one
  example, then the state machine), the median over `--seeds` runs whose generation is
  seeded by the run's number (Hypothesis' global seed; no database, no shrinking), at most
  `--max-examples` each; `-` where no run found it, `found` says in how many it did;
- **steps** and **deviations**: the counterexample the `ci` profile shrinks to (its steps,
  `init` included) and the number of "ran X before Y" exceptions to FIFO in the virtual
  loop's schedule record of that shrunk run (`render_schedule`);
- **FIFO**: the same seeded workloads with the loop's chooser answering 0 at every
  choice (`FirstChooser`; the workload's own draws still come from Hypothesis): found in
  how many of the runs;
- **stock**: the shrunk counterexample's step program replayed on a stock asyncio event
  loop (`asyncio.new_event_loop()`, real time, one mesh millisecond `--stock-scale` real
  seconds), its trace judged by the same check; `clean fails too` where the clean mesh
  fails the same program there (real time's jitter breaks an exact-timing obligation);

A script, not a test: the figures depend on Hypothesis' version and the machine's load.
"""

from __future__ import annotations

import argparse
import asyncio
import fnmatch
import importlib
import logging
import os
import platform
import re
import statistics
import sys
import time
import tomllib
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import hypothesis.core
import seeded_runs  # the sibling script: seeded searches

from invariants.adapter import Capability, Chooser, FirstChooser, Route
from invariants.aio import render_schedule
from invariants.aio.faultbook import FaultBook
from invariants.aio.rig import Rig
from invariants.aio.tracelog import TraceLog
from invariants.dynamic.runner import Outcome, run_invariant, run_program
from invariants.trace import EventKind

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "aiomesh-repo"
sys.path.insert(0, str(EXAMPLE / "src"))
Factory = Callable[[Chooser], Any]


def _load() -> tuple[Any, Any, Any]:
    adapter = importlib.import_module("aiomesh.harness_adapter")
    bugs = importlib.import_module("aiomesh.bugs")
    from harness.params import params_from
    from invariants.checks import team

    table = tomllib.loads((EXAMPLE / "pyproject.toml").read_text(encoding="utf-8"))
    params = params_from(table["tool"]["harness"]["params"], "aiomesh pyproject.toml")
    for spec in table["tool"]["harness"].get("invariants", []):
        if team.is_spec(spec):  # the example's own (TURN1), which a planted bug breaks
            team.load(spec, [EXAMPLE])
    return adapter, bugs, params


ADAPTER, BUGS_MODULE, PARAMS = _load()
sys.path.insert(0, str(ROOT / "tests" / "examples"))
CATALOGUE: Any = importlib.import_module("aiomesh_planted_bugs")  # each bug's own line


def check_of(bug: Any) -> str:
    """The invariant whose run should catch `bug`: the one it breaks (an at-most-once
    effect is INV4's)."""
    return "INV4" if bug.breaks == "AT_MOST_ONCE" else str(bug.breaks)


# Factories ---------------------------------------------------------------------------------


def virtual(name: str, keep: list[Any]) -> Factory:
    """The bug's factory; every adapter it makes is kept (the last: the shrunk run)."""
    made = ADAPTER.BUG_FACTORIES[name]

    def factory(chooser: Chooser) -> Any:
        adapter = made(chooser)
        keep[:] = [adapter]
        return adapter

    factory.__name__ = factory.__qualname__ = made.__name__
    return factory


def fifo(name: str) -> Factory:
    """The bug's mesh on a virtual loop whose chooser always answers 0."""
    made = ADAPTER.BUG_FACTORIES[name]

    def factory(chooser: Chooser) -> Any:
        return made(FirstChooser())

    factory.__name__ = factory.__qualname__ = made.__name__ + "_fifo"
    return factory


class _StockTrace(ADAPTER._Trace):  # type: ignore[misc, name-defined]
    """The mesh's own turn notes are the trace's here (the kit's fault book is not used)."""

    def note(self, kind: str, fields: dict[str, Any]) -> None:
        if kind in ("turn_blocked", "turn_released"):
            self.adapter.emit(EventKind(kind), hub=fields["hub"])
            return
        super().note(kind, fields)


class StockLoopAdapter(ADAPTER.AioMeshAdapter):  # type: ignore[misc, name-defined]
    """The mesh on a stock asyncio loop in real time: one mesh ms is `scale` seconds. The
    protocol's clock counts the milliseconds the harness advanced; an advance sleeps until
    that instant of real time (so lateness does not pile up); the trace is stamped with the
    mesh's own clock, read off the real loop."""

    scale = 0.0005
    mesh: Any
    capabilities: Any
    current: Any = None  # the loop of the adapter made last (closed when the next is made)

    def __init__(self, chooser: Chooser, *, bugs: Sequence[str], at_least_once: bool) -> None:
        if StockLoopAdapter.current is not None:
            _close(StockLoopAdapter.current)
        self.chooser = chooser
        self.loop = loop = StockLoopAdapter.current = asyncio.new_event_loop()
        self._ms = 0
        self.rig = Rig(trace=TraceLog(lambda: self.mesh.now_ms()), faults=FaultBook(loop))
        if at_least_once:
            self.capabilities = type(self).capabilities | {Capability.AT_LEAST_ONCE}
        mesh_module = importlib.import_module("aiomesh.mesh")
        self.mesh = mesh_module.Mesh(observer=_StockTrace(self, applied=at_least_once),
                                     bugs=bugs, at_least_once=at_least_once, loop=loop,
                                     seconds_per_ms=self.scale)
        self._t0 = loop.time()

    @contextmanager
    def _lane(self) -> Iterator[None]:
        with self.active():
            yield

    def inject(self, fault: Any) -> None:
        with self.active():
            self.emit(EventKind.FAULT_INJECTED, reason=fault.kind.value, target=fault.target)
            self.on_fault(fault)

    def now_ms(self) -> int:
        return self._ms

    def schedule_text(self) -> str:
        return "the stock loop in real time: no schedule record"

    def _run_to(self, ms: int) -> None:
        loop = self.loop
        loop.run_until_complete(asyncio.sleep(max(0.0, self._t0 + ms * self.scale - loop.time())))
        self._ms = ms

    def advance(self, ms: int) -> None:
        self._run_to(self._ms + ms)

    def run_until_idle(self, limit_ms: int) -> bool:
        loop, end = self.loop, self._ms + limit_ms
        while True:
            self._run_to(self._ms)  # what is ready now
            timers = [h.when() for h in loop._scheduled if not h.cancelled()]  # type: ignore[attr-defined]
            if not timers and not loop._ready:  # type: ignore[attr-defined]
                return True
            due = self._ms + 1 if not timers else max(
                self._ms + 1, int((min(timers) - self._t0) / self.scale) + 1)
            if due > end:
                self._run_to(end)
                return False
            self._run_to(due)


def _close(loop: asyncio.AbstractEventLoop) -> None:
    tasks = asyncio.all_tasks(loop)
    for task in tasks:
        task.cancel()
    if tasks:
        loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
    loop.close()


def stock(name: str | None) -> Factory:
    bugs = () if name is None else (name,)
    at_least_once = name in ADAPTER.AT_LEAST_ONCE_BUGS

    def factory(chooser: Chooser) -> Any:
        return StockLoopAdapter(chooser, bugs=bugs, at_least_once=at_least_once)

    factory.__name__ = factory.__qualname__ = f"stock_{name or 'clean'}"
    return factory


# Runs --------------------------------------------------------------------------------------


def found_in(check: str, factory: Factory, seed: int, max_examples: int) -> int | None:
    """Examples to the first failure of one seeded run, or None."""
    return seeded_runs.found_in(check, factory, seed, max_examples, params=PARAMS)


_STEP = re.compile(r"^state\.(\w+)\((.*)\)$")
_ENUM = re.compile(r"<Route\.(\w+): '\w+'>")


def step_program(text: str) -> list[tuple[str, dict[str, Any]]]:
    """The `state.*` step lines of a failure text as a program `run_program` replays."""
    program = []
    for line in text.splitlines():
        match = _STEP.match(line.strip())
        if match is None or match[1] in ("safety", "teardown"):
            continue
        shown = _ENUM.sub(r"Route.\1", match[2])
        arguments = eval(f"dict({shown})", {"Route": Route})  # the repr Hypothesis printed
        program.append((match[1], arguments))
    return program


@dataclass
class Row:
    bug: str
    check: str
    race: bool
    examples: list[int | None]
    steps: int | None = None
    deviations: int | None = None
    schedule: str = ""
    fifo: list[int | None] | None = None
    stock: str = "-"
    seconds: float = 0.0


def measure(name: str, seeds: int, max_examples: int) -> Row:
    started = time.perf_counter()
    bug = BUGS_MODULE.BUGS[name]
    check = check_of(bug)
    keep: list[Any] = []
    row = Row(name, check, bool(bug.race), [
        found_in(check, virtual(name, keep), seed, max_examples) for seed in range(seeds)])
    row.fifo = [found_in(check, fifo(name), seed, max_examples) for seed in range(seeds)]
    shrunk = run_invariant(check, virtual(name, keep), "ci", params=PARAMS)
    if shrunk.verdict == "violation" and keep:
        row.steps = shrunk.shrunk_steps
        schedule = keep[0].loop.schedule
        row.deviations = len(schedule.reorderings())
        row.schedule = render_schedule(schedule)
        row.stock = stock_verdict(check, name, shrunk)
    row.seconds = time.perf_counter() - started
    return row


def _says(outcome: Outcome, pattern: str) -> bool:
    return any(fnmatch.fnmatchcase(line.strip(), pattern)
               for line in (outcome.failure_text or "").splitlines())


def stock_verdict(check: str, name: str, shrunk: Outcome) -> str:
    """Whether the bug's own line (tests/examples/aiomesh_planted_bugs.py) is in the
    failure of its shrunk program on the stock loop, and not in the clean mesh's there:
    real time stamps events a little late, which an exact-timing obligation may fail on
    both (counted apart, as `jitter`)."""
    program = tuple(step_program(shrunk.failure_text or ""))
    pattern = CATALOGUE.BY_NAME[name].caught
    if not program or not pattern:
        return "-"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        buggy = run_program(check, stock(name), program, params=PARAMS)
        clean = run_program(check, stock(None), program, params=PARAMS)
    if _says(clean, pattern):
        return "clean says it too"
    jitter = " (+jitter)" if clean.verdict != "pass" else ""
    return ("caught" if _says(buggy, pattern) else "missed") + jitter


# Report ------------------------------------------------------------------------------------


def median(found: Sequence[int | None]) -> str:
    hits = [n for n in found if n is not None]
    if not hits:
        return "-"
    value = statistics.median(hits)
    return f"{value:g}" if len(hits) == len(found) else f"{value:g} ({len(hits)}/{len(found)})"


def hits(found: Sequence[int | None] | None) -> str:
    if found is None:
        return "-"
    count = sum(n is not None for n in found)
    return "no" if count == 0 else f"yes ({count}/{len(found)})"


def table(rows: Sequence[Row]) -> str:
    head = ["bug", "invariant", "race", "median examples", "shrunk steps", "deviations",
            "FIFO", "stock asyncio"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [f"`{r.bug}`", r.check, "yes" if r.race else "", median(r.examples),
                 "-" if r.steps is None else str(r.steps),
                 "-" if r.deviations is None else str(r.deviations), hits(r.fifo), r.stock]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--max-examples", type=int, default=200)
    parser.add_argument("--bugs", default="", help="comma-separated (default: all)")
    parser.add_argument("--stock-scale", type=float, default=StockLoopAdapter.scale,
                        help="real seconds per mesh millisecond on the stock loop")
    args = parser.parse_args(argv)
    StockLoopAdapter.scale = args.stock_scale
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)  # the stock loops' cut tasks
    names = [n for n in args.bugs.split(",") if n] or list(BUGS_MODULE.BUGS)
    load = os.getloadavg()
    print(f"Python {platform.python_version()}, Hypothesis {hypothesis.__version__}, "
          f"{os.cpu_count()} CPU(s), load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
          f"{args.seeds} seeds, at most {args.max_examples} examples each", flush=True)
    rows: list[Row] = []
    for name in names:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # coroutines of dropped loops
            row = measure(name, args.seeds, args.max_examples)
        rows.append(row)
        first = row.schedule.splitlines()[0] if row.schedule else "no counterexample"
        print(f"  {name}: {row.seconds:.0f} s; {first}", flush=True)
        for line in row.schedule.splitlines()[1:]:
            print(f"    {line}", flush=True)
    print()
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
