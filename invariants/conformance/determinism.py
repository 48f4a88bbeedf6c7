"""Same choices, same trace: adapter-check's determinism guard.

Hypothesis replays and shrinks a failing example by running its choices again, so a mesh
whose trace depends on anything but the harness's choices (a module-level counter, the
iteration order of a set of strings, the wall clock) gives a counterexample that does not
replay. Two comparisons, over the canonical JSON of every event (`seq` and `time_ms`
included):

- in process: each conformance program is run a second time, with the same choices, after
  all of them ran once; a trace that differs depends on state the first run left behind;
- across processes: one subprocess per hash seed (`HASH_SEEDS`, run side by side) runs every
  program once, in the order `conformance` does, and prints each trace's digest and lines;
  traces that differ between the two depend on `PYTHONHASHSEED` (the order of a set or a
  dict keyed by strings, `hash()` of a string).

A difference is one broken convention `determinism` per program, naming the first event
where the traces part and both events there. The subprocess imports the adapter by its
spec (`module:factory`) with the parent's `sys.path`: `python -m
invariants.conformance.determinism MODULE:FACTORY` prints the traces as JSON.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from invariants.adapter import AdapterFactory, FirstChooser
from invariants.adapter_calls import calling_adapter, factory_name
from invariants.capabilities import capabilities_of
from invariants.conformance.conventions import Broken
from invariants.conformance.programs import PROGRAMS, ProgramResult, drive
from invariants.step_budget import within_budget
from invariants.trace import canonical_line

HASH_SEEDS = ("1", "2")
SUBPROCESS_TIMEOUT_S = 60.0
CONVENTION = "determinism"


def program_traces(factory: AdapterFactory) -> dict[str, list[str]]:
    """Every program the adapter declares, run once in `conformance`'s order: its trace as
    canonical JSON lines, by program."""
    name = factory_name(factory)
    with calling_adapter(name, "from its factory"):
        declared = capabilities_of(factory(FirstChooser()))
    traces: dict[str, list[str]] = {}
    for program in PROGRAMS:
        if program.needs is None or program.needs in declared:
            with (calling_adapter(name, f"in conformance program {program.name!r}"),
                  within_budget(f"conformance program {program.name!r}")):
                _, _, trace = drive(program, factory)
            traces[program.name] = [canonical_line(e) for e in trace]
    return traces


def first_difference(first: Sequence[str], second: Sequence[str]) -> int | None:
    """The index of the first event where two traces differ (one ending early included)."""
    for index, (a, b) in enumerate(zip(first, second, strict=False)):
        if a != b:
            return index
    return None if len(first) == len(second) else min(len(first), len(second))


def _kind(line: str | None) -> str:
    if line is None:
        return "-"
    return str(json.loads(line).get("kind", "-")).upper()


def parted(first: Sequence[str], second: Sequence[str], how: str, names: tuple[str, str]
           ) -> Broken | None:
    """The broken convention two traces of one program show, if they differ: `how` says
    how they were run, `names` what each run was."""
    index = first_difference(first, second)
    if index is None:
        return None
    a = first[index] if index < len(first) else None
    b = second[index] if index < len(second) else None
    return Broken(CONVENTION, index, _kind(a if a is not None else b),
                  f"{how}, the traces part at event {index}: {names[0]} "
                  f"{a or '(trace ended)'}, {names[1]} {b or '(trace ended)'}: the trace must "
                  "depend only on the harness's choices, or no counterexample replays")


def in_process(factory: AdapterFactory, results: Sequence[ProgramResult]
               ) -> dict[str, Broken]:
    """Each program run again in this process, compared with its first run."""
    found: dict[str, Broken] = {}
    by_name = {p.name: p for p in PROGRAMS}
    for result in results:
        program = by_name[result.program]
        with (calling_adapter(factory_name(factory), f"in conformance program "
                              f"{program.name!r}, run again"),
              within_budget(f"conformance program {program.name!r}, run again")):
            _, _, trace = drive(program, factory)
        broken = parted([canonical_line(e) for e in result.trace],
                        [canonical_line(e) for e in trace],
                        "run twice in one process with the same choices",
                        ("first run", "second run"))
        if broken is not None:
            found[result.program] = broken
    return found


def _child_env(seed: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONHASHSEED"] = seed
    env["PYTHONPATH"] = os.pathsep.join(p or os.curdir for p in sys.path)
    return env


def across_hash_seeds(spec: str, seeds: Sequence[str] = HASH_SEEDS) -> dict[str, Broken]:
    """Every program run in one subprocess per hash seed, side by side; the traces compared
    program by program (the first seed's against each other's)."""
    command = [sys.executable, "-m", "invariants.conformance.determinism", spec]
    children = [subprocess.Popen(command, env=_child_env(seed), stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True) for seed in seeds]
    outputs: list[tuple[str, str, int]] = []
    for child in children:
        try:
            out, err = child.communicate(timeout=SUBPROCESS_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            child.kill()
            out, err = child.communicate()
            err = f"no answer within {SUBPROCESS_TIMEOUT_S:.0f} s"
        outputs.append((out, err, child.returncode))
    runs: list[Mapping[str, Mapping[str, Any]]] = []
    for seed, (out, err, code) in zip(seeds, outputs, strict=True):
        if code != 0:
            last = (err.strip().splitlines() or [f"exit {code}"])[-1]
            return {"*": Broken(CONVENTION, None, "PYTHONHASHSEED",
                                f"the programs run in a subprocess under PYTHONHASHSEED={seed} "
                                f"failed: {last}")}
        runs.append(json.loads(out))
    found: dict[str, Broken] = {}
    for name, first in runs[0]["traces"].items():
        for seed, run in zip(seeds[1:], runs[1:], strict=True):
            if run["digests"].get(name) == runs[0]["digests"][name]:
                continue
            broken = parted(first, run["traces"].get(name, []),
                            f"run in two processes under PYTHONHASHSEED={seeds[0]} and {seed}",
                            (f"seed {seeds[0]}", f"seed {seed}"))
            if broken is not None:
                found.setdefault(name, broken)
    return found


def guarded(spec: str | None, factory: AdapterFactory, results: Sequence[ProgramResult]
            ) -> list[ProgramResult]:
    """`results` with each program's determinism break added (the in-process one first,
    then, where `spec` names the adapter for a subprocess, the hash-seed one)."""
    found = in_process(factory, results)
    if spec is not None:
        for name, broken in across_hash_seeds(spec).items():
            found.setdefault(name, broken)
    extra = found.pop("*", None)
    guarded_results = [replace(r, broken=(*r.broken, found[r.program]))
                       if r.program in found else r for r in results]
    if extra is not None and guarded_results:
        last = guarded_results[-1]
        guarded_results[-1] = replace(last, broken=(*last.broken, extra))
    return guarded_results


def _load(spec: str) -> AdapterFactory:
    module_name, _, qualname = spec.partition(":")
    target: object = importlib.import_module(module_name)
    for part in qualname.split("."):
        target = getattr(target, part)
    if not callable(target):
        raise TypeError(f"{spec} is not callable")
    return target


def digest_lines(lines: Sequence[str]) -> str:
    """What `invariants.trace.digest` gives for the events these lines are."""
    h = hashlib.sha256()
    for line in lines:
        h.update(line.encode())
        h.update(b"\n")
    return h.hexdigest()


def main(argv: Sequence[str]) -> int:
    """The subprocess: every program of the adapter `argv[0]` names, as JSON on stdout."""
    (spec,) = argv
    traces = program_traces(_load(spec))
    json.dump({"digests": {name: digest_lines(lines) for name, lines in traces.items()},
               "traces": traces}, sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
