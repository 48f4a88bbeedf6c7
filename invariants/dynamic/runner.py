"""Run a dynamic invariant against a mesh and say what happened, for programs and reports.

`run_invariant(check_id, adapter_factory, profile)` tries the check's seed programs, then
runs its state machine under a named settings profile, and returns an `Outcome`: passed or
not, examples until the first failure (a seed program counts as one), steps of the shrunk
counterexample, the failure text (violations, step program, reproduce blob, Mermaid
diagram), the evidence (per obligation, how often the run exercised it) and the seconds it
took. A run with no violation in which some obligation was never exercised has not shown
the invariant holds: its verdict is "not exercised", a failure naming the likely cause.
An invariant about a capability the adapter does not declare (a grain router, subscribe,
the stop lifecycle) is "not applicable": listed with its obligations, never passed.
`run_program` runs one fixed step program the same way, without Hypothesis.

Every run also judges, as a bystander, every other check the adapter's capabilities admit
(`invariants.dynamic.judge`): never part of its verdict, what it saw of each is in the
outcome's `bystanders` (evidence, and the first violation with a program that replays it),
for a report that judges every check to merge (`python -m harness check`).
"""

from __future__ import annotations

import gc
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from hypothesis import settings as Settings

from invariants.adapter import AdapterFactory, Capability, FirstChooser
from invariants.adapter_calls import calling_adapter, factory_name
from invariants.capabilities import capabilities_of
from invariants.checks import CHECKS, CheckParams, Violation
from invariants.dynamic.driver import MeshMachine
from invariants.dynamic.judge import RunStats, Sighting, recording
from invariants.dynamic.mesh_keys import keyed_machine_class, run_keyed_machine
from invariants.dynamic.plans import machine_class, seed_programs_for
from invariants.dynamic.profiles import profile as named_profile
from invariants.dynamic.report import (
    InvariantViolated,
    failure_note,
    failure_text,
    schedule_note,
)
from invariants.dynamic.seed_programs import SEED_PROGRAMS, Program, resolved

Verdict = Literal["pass", "violation", "not exercised", "not applicable", "error"]


@dataclass(frozen=True)
class Bystander:
    """What a run saw of a check it judged as a bystander: the cases it gave the check's
    obligations and, if the check was violated, its first violation, the step program
    (`init` included) that led to it, for `run_program(check, ...)` to replay, and the
    example it came in (counted as the outcome's `examples` are: seed programs first)."""

    evidence: Mapping[str, int]
    violation: str | None = None
    program: Program | None = None
    example: int | None = None


@dataclass(frozen=True)
class Outcome:
    check_id: str
    verdict: Verdict  # "error": the mesh or adapter raised, no invariant verdict
    examples: int  # examples until the first failure, or all examples run when it passed
    shrunk_steps: int | None  # steps (rules, `init` included) of the reported counterexample
    failure_text: str | None
    seconds: float
    violations: tuple[Violation, ...] = ()
    diagram: str | None = None
    # The failing run's ready order, where the adapter's loop records one (`schedule_text`)
    schedule: str | None = None
    seed_program: str | None = None  # the seed program that failed, by name
    behaviours: Mapping[str, int] = field(default_factory=dict)  # examples reaching each
    evidence: Mapping[str, int] = field(default_factory=dict)  # obligation -> cases, summed
    unexercised: Mapping[str, str] = field(default_factory=dict)  # obligation -> likely cause
    # Obligations of an optional capability the adapter lacks -> why: listed, never passed.
    inapplicable: Mapping[str, str] = field(default_factory=dict)
    context: Mapping[str, int] = field(default_factory=dict)  # sightings behind the causes
    # The other checks the run judged as a bystander -> what it saw of each.
    bystanders: Mapping[str, Bystander] = field(default_factory=dict)
    # "error": what the mesh or adapter raised, with its traceback, for the reports.
    error: BaseException | None = field(default=None, compare=False)

    @property
    def passed(self) -> bool:
        return self.verdict == "pass"

    @property
    def ok(self) -> bool:
        """Nothing failed: passed, or not applicable to this adapter."""
        return self.verdict in ("pass", "not applicable")


def _unexercised(
    check_id: str,
    evidence: Mapping[str, int],
    context: Mapping[str, int],
    inapplicable: Mapping[str, str],
) -> dict[str, str]:
    monitor = CHECKS[check_id]
    seen = {**context, **evidence}
    return {
        name: monitor.cause(name, seen)
        for name in monitor.obligations
        if evidence.get(name, 0) == 0 and name not in inapplicable
    }


def _unexercised_text(check_id: str, unexercised: Mapping[str, str]) -> str:
    lines = [f"{check_id} not exercised: {len(unexercised)} obligation(s) had no case in "
             "the whole run, so passing says nothing about them:"]
    lines += [f"  - {name}: {cause}" for name, cause in unexercised.items()]
    return "\n".join(lines)


def _across_text(check_id: str, across: Sequence[str], evidence: Mapping[str, int],
                 context: Mapping[str, int]) -> str:
    """The run's violations that no single example shows, with the counts behind them."""
    lines = [f"{check_id}: {line}" for line in across]
    lines.append("Every example passed alone; the run's counts contradict each other:")
    lines += [f"  {count:7d}  {name}" for name, count in {**evidence, **context}.items()
              if count]
    return "\n".join(lines)


# Middle-generation collections between two full ones during a search (Python's default is
# 10). An example's mesh is freed only by a full pass (its hubs and routers refer to each
# other), and at the default pace those passes took about a quarter of INV6's time.
FULL_COLLECTION_PACE = 50


@contextmanager
def _full_collections_paced() -> Iterator[None]:
    """The cyclic collector's full passes at `FULL_COLLECTION_PACE`, as before afterwards."""
    young, middle, full = gc.get_threshold()
    gc.set_threshold(young, middle, max(full, FULL_COLLECTION_PACE))
    try:
        yield
    finally:
        gc.set_threshold(young, middle, full)


def _settings(profile: str | Settings) -> Settings:
    return named_profile(profile) if isinstance(profile, str) else profile


def run_invariant(
    check_id: str,
    adapter_factory: AdapterFactory,
    profile: str | Settings = "ci",
    *,
    params: CheckParams | None = None,
    diagram_path: Path | None = None,
    seed_scenarios: bool = True,
    seeds_first: Sequence[str] = (),
    bystanders: bool = True,
) -> Outcome:
    """The check's seed programs first (the known shapes, always tried, like Hypothesis'
    explicit examples), then its state machine under `profile` (a settings object, or the
    name of a profile of `invariants.dynamic.profiles`). `seed_scenarios=False` leaves the
    seed shapes out of both, so only the drawn rules explore. The seed programs named in
    `seeds_first` run before the others (a mutant's own shapes: the kill they are there for
    ends the run soonest); the first program that fails ends the run whatever the order,
    and a run that passes runs them all. `bystanders=False`: judge the check alone, the
    outcome's `bystanders` empty (a caller that reads only the check's own verdict)."""
    started = time.perf_counter()  # reporting only: no decision depends on it
    try:
        with calling_adapter(factory_name(adapter_factory), "from its factory"):
            capabilities = capabilities_of(adapter_factory(FirstChooser()))
    except Exception as exc:  # the factory itself raised: reported, not a verdict
        return Outcome(check_id=check_id, verdict="error", examples=0, shrunk_steps=None,
                       failure_text=failure_text(exc), seconds=time.perf_counter() - started,
                       error=exc)
    missing = CHECKS[check_id].needs - capabilities
    if missing:
        return _not_applicable(check_id, missing)
    tally = _Tally(check_id)
    # The seed programs the adapter can take, with the stand-in routes `init` replays too.
    programs = _ordered(seed_programs_for(check_id, capabilities), seeds_first) \
        if seed_scenarios else {}
    for index, (name, program) in enumerate(programs.items(), start=1):
        outcome = run_program(
            check_id, adapter_factory, program, params=params, diagram_path=diagram_path,
            name=name, capabilities=capabilities, bystanders=bystanders,
        )
        tally.add(outcome.behaviours, outcome.evidence, outcome.context)
        tally.look_on(outcome.bystanders, before=index - 1)
        if not outcome.passed:  # the run's counts so far, as a failing search reports
            return replace(outcome, examples=index, seconds=time.perf_counter() - started,
                           seed_program=name, behaviours=dict(tally.behaviours),
                           evidence=dict(tally.evidence), context=dict(tally.context),
                           inapplicable=CHECKS[check_id].inapplicable(
                               capabilities, params or CheckParams()),
                           bystanders=tally.bystanders())
    # Keyed by the mesh: a database replays here only what was saved for this mesh.
    machine = keyed_machine_class(
        check_id,
        adapter_factory,
        params=params,
        diagram_path=diagram_path,
        seed_scenarios=seed_scenarios,
        capabilities=capabilities,
    )
    outcome = _search(check_id, machine, _settings(profile), tally, capabilities, bystanders,
                      params or CheckParams(), programs_run=len(programs))
    return replace(outcome, examples=len(programs) + outcome.examples,
                   seconds=time.perf_counter() - started)


def _ordered(programs: dict[str, Program], first: Sequence[str]) -> dict[str, Program]:
    """`programs` with those named in `first` (in that order) ahead of the rest."""
    ahead = {name: programs[name] for name in first if name in programs}
    return {**ahead, **programs}


@dataclass
class _Tally:
    """What a run's seed programs and examples exercised, summed."""

    check_id: str
    behaviours: Counter[str] = field(default_factory=Counter)
    evidence: Counter[str] = field(default_factory=Counter)
    context: Counter[str] = field(default_factory=Counter)
    # The bystander checks': evidence, and the first violation of each (the earliest run's)
    others: dict[str, Counter[str]] = field(default_factory=dict)
    sightings: dict[str, Sighting] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.evidence.update(dict.fromkeys(CHECKS[self.check_id].obligations, 0))

    def add(self, behaviours: Mapping[str, int], evidence: Mapping[str, int],
            context: Mapping[str, int]) -> None:
        self.behaviours.update(behaviours)
        self.evidence.update(evidence)
        self.context.update(context)

    def look_on(self, bystanders: Mapping[str, Bystander], *, before: int) -> None:
        """Add what a seed program or the search saw as a bystander (a check's first
        violation stays the earliest one's), `before` examples into the whole run."""
        for check, seen in bystanders.items():
            self.others.setdefault(check, Counter()).update(seen.evidence)
            if seen.violation is not None and seen.program is not None:
                self.sightings.setdefault(check, Sighting(
                    seen.violation, seen.program, before + (seen.example or 1)))

    def bystanders(self) -> dict[str, Bystander]:
        return _bystanders(self.others, self.sightings)


def _bystanders(evidence: Mapping[str, Mapping[str, int]],
                sightings: Mapping[str, Sighting]) -> dict[str, Bystander]:
    """Per bystander check (its obligations listed, 0 where unseen), what the run saw."""
    order = list(CHECKS)
    seen: dict[str, Bystander] = {}
    for check in sorted(set(evidence) | set(sightings), key=order.index):
        cases = {**dict.fromkeys(CHECKS[check].obligations, 0), **evidence.get(check, {})}
        sighting = sightings.get(check)
        seen[check] = Bystander(cases) if sighting is None else Bystander(
            cases, sighting.text, sighting.program, sighting.example)
    return seen


def _seen_by(check_id: str, stats: RunStats) -> dict[str, Bystander]:
    """What a recorded run saw of the checks other than its own."""
    others = {check: counts for check, counts in stats.evidence.items() if check != check_id}
    return _bystanders(others, stats.sightings)


def _search(check_id: str, machine: type[MeshMachine], settings: Settings, tally: _Tally,
            capabilities: frozenset[Capability], bystanders: bool,
            params: CheckParams, *, programs_run: int) -> Outcome:
    """The state machine's examples, judged with the seed programs' tally (`programs_run`
    of them ran first: the offset of the search's examples)."""
    verdict: Verdict = "pass"
    text: str | None = None
    error: BaseException | None = None
    with recording(bystanders=bystanders) as stats, _full_collections_paced():
        try:
            run_keyed_machine(machine, settings)
        except InvariantViolated as exc:
            verdict, text = "violation", failure_text(exc)
        except Exception as exc:  # the mesh under test raised: reported, not a verdict
            verdict, text, error = "error", failure_text(exc), exc
    tally.add(stats.behaviours, stats.evidence.get(check_id, {}),
              stats.context.get(check_id, {}))
    tally.look_on(_seen_by(check_id, stats), before=programs_run)
    evidence, context = tally.evidence, tally.context
    inapplicable = CHECKS[check_id].inapplicable(capabilities, params)
    across = CHECKS[check_id].across_examples(evidence, context) if verdict == "pass" else []
    if across:
        verdict, text = "violation", _across_text(check_id, across, evidence, context)
    unexercised = (
        _unexercised(check_id, evidence, context, inapplicable) if verdict == "pass" else {}
    )
    if unexercised:
        verdict, text = "not exercised", _unexercised_text(check_id, unexercised)
    violated = verdict == "violation"
    failed = verdict != "pass"
    return Outcome(
        check_id=check_id,
        verdict=verdict,
        examples=(stats.first_failure_example or stats.examples) if failed else stats.examples,
        shrunk_steps=stats.failing_steps if violated else None,
        failure_text=text,
        seconds=0.0,  # the caller's clock, which includes the seed programs
        violations=stats.violations if violated else (),
        diagram=stats.diagram if violated else None,
        schedule=stats.schedule if violated else None,
        behaviours=dict(tally.behaviours),
        evidence=dict(evidence),
        unexercised=unexercised,
        inapplicable=inapplicable,
        context=dict(context),
        bystanders=tally.bystanders(),
        error=error,
    )


def _not_applicable(check_id: str, missing: frozenset[Capability]) -> Outcome:
    names = " or ".join(sorted(c.value.replace("_", " ") for c in missing))
    obligations = CHECKS[check_id].obligations
    lines = [f"{check_id} not applicable: the adapter declares no {names} "
             f"({len(obligations)} obligation(s) not checked):"]
    lines += [f"  - {name}" for name in obligations]
    return Outcome(check_id=check_id, verdict="not applicable", examples=0, shrunk_steps=None,
                   failure_text="\n".join(lines), seconds=0.0,
                   evidence=dict.fromkeys(obligations, 0))


def program_text(machine_name: str, program: Program) -> str:
    """A step program as the `state.*` lines Hypothesis prints: paste it into a test that
    has the machine class to replay it."""
    lines = [f"state = {machine_name}()"]
    for name, arguments in program:
        shown = ", ".join(f"{key}={value!r}" for key, value in arguments.items())
        lines += [f"state.{name}({shown})", "state.safety()"]
    lines.append("state.teardown()")
    return "\n".join(lines)


def run_program(
    check_id: str,
    adapter_factory: AdapterFactory,
    program: Program,
    *,
    params: CheckParams | None = None,
    diagram_path: Path | None = None,
    name: str = "program",
    capabilities: frozenset[Capability] | None = None,
    bystanders: bool = True,
) -> Outcome:
    """Run a fixed step program: each step, then the safety checks; teardown at the end.
    Durations the program states as the mesh's figures are the mesh's (`params`). Its
    steps may be any families, the check's plan's or not (a program recorded while
    driving another check's plan)."""
    program = resolved(program, params or CheckParams())
    machine_type = machine_class(check_id, adapter_factory, params=params,
                                 diagram_path=diagram_path, capabilities=capabilities,
                                 steps={step for step, _ in program})
    with recording(bystanders=bystanders) as stats:
        machine: MeshMachine = machine_type()
    started = time.perf_counter()
    verdict: Verdict = "pass"
    text: str | None = None
    error: BaseException | None = None
    try:
        try:
            for step, arguments in program:
                getattr(machine, step)(**arguments)
                machine.safety()
        finally:
            machine.teardown()
    except InvariantViolated as exc:
        verdict, text = "violation", str(exc)
    except Exception as exc:
        verdict, text, error = "error", f"{type(exc).__name__}: {exc}", exc
    if text is not None:
        parts = [text, f"Seed program {name!r}:", program_text(machine_type.__name__, program)]
        if stats.diagram is not None and verdict == "violation":
            parts.append(failure_note(stats.diagram, diagram_path))
        if stats.schedule is not None and verdict == "violation":
            parts.append(schedule_note(stats.schedule))
        text = "\n".join(parts)
    return Outcome(
        check_id=check_id,
        verdict=verdict,
        examples=1,
        shrunk_steps=len(program) if verdict == "violation" else None,
        failure_text=text,
        seconds=time.perf_counter() - started,
        violations=stats.violations if verdict == "violation" else (),
        diagram=stats.diagram if verdict == "violation" else None,
        schedule=stats.schedule if verdict == "violation" else None,
        behaviours=dict(stats.behaviours),
        evidence=dict(stats.evidence.get(check_id, {})),
        context=dict(stats.context.get(check_id, {})),
        bystanders=_seen_by(check_id, stats),
        error=error,
    )


def run_seed_programs(
    check_id: str, adapter_factory: AdapterFactory, *, params: CheckParams | None = None
) -> dict[str, Outcome]:
    """Every seed scenario of `check_id`, by name."""
    return {
        name: run_program(check_id, adapter_factory, program, params=params)
        for name, program in SEED_PROGRAMS.get(check_id, {}).items()
    }


__all__: Sequence[str] = [
    "Bystander",
    "Outcome",
    "run_invariant",
    "run_program",
    "run_seed_programs",
]
