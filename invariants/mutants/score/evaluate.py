"""Run one engine mutant through the harness, cheapest check first, and stop at the first kill.

Order: build and import an isolated copy (a mutant that does not import is incompetent,
whatever else it does), the static scan of the mutated tree (a finding the unmutated tree
lacks kills), adapter-check's conformance programs (a broken convention kills: a mesh that
no longer asks its Chooser, say, has a schedule the search cannot explore, whatever the
invariants say of the one run it makes), every check's seed programs (one example each:
they kill most mutants), then each check's state machine under the profile, in the order
of their cost on the unmutated mesh. A mesh that raises under a check is killed too: the
harness run fails on it. A mutant that runs past `timeout` CPU seconds is timed out, not killed.
"""

from __future__ import annotations

import shutil
import signal
import time
from contextlib import AbstractContextManager, nullcontext
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal, cast

from invariants.adapter import AdapterFactory, FirstChooser
from invariants.capabilities import capabilities_of
from invariants.conformance.programs import conformance
from invariants.dynamic.mesh_keys import MESH_ID_ATTRIBUTE
from invariants.dynamic.plans import seed_programs_for
from invariants.dynamic.runner import Outcome, run_invariant, run_program
from invariants.dynamic.seed_programs import Program
from invariants.mutants.build import isolate, package_name
from invariants.mutants.copies import forget
from invariants.mutants.matrix import scan_sources
from invariants.mutants.score.engine import EngineMutant, apply
from invariants.mutants.score.reach import Reach
from invariants.mutants.score.target import MeshTarget
from invariants.scan.model import Finding
from invariants.step_budget import cpu_alarm, limited, step_budget_seconds, steps_seen

Status = Literal["killed", "survived", "timeout", "incompetent"]
Phase = Literal["", "scan", "conformance", "seed", "search"]
# The conformance programs, judged as one check beside the invariants (and measured for
# reach under this name): `python -m harness adapter-check` runs the same.
CONFORMANCE = "adapter-check"
FindingKey = tuple[str, str, str, str]


@dataclass(frozen=True)
class Verdict:
    status: Status
    check: str = ""  # the check that killed it (a rule id or an invariant id)
    phase: Phase = ""
    examples: int = 0  # examples the killing check ran (0 for the scan)
    evidence: str = ""  # the finding, the violation, the error or why it is incompetent
    seconds: float = 0.0
    unreached: bool = False  # survived because no check's run executes its statement
    # The step budget it was judged under (CPU seconds; 0: none; None: it ran no step), its
    # slowest step that ended, and whether a step ran past the budget: what says whether
    # a cached verdict holds under another run's budget (`holds_under`).
    budget: float | None = None
    slowest_step: float = 0.0
    hung: bool = False

    def holds_under(self, budget: float) -> bool:
        """Whether judging again with a step budget of `budget` (0: none) gives this: a
        hang only under the same budget; otherwise while its slowest step fits."""
        if self.hung:
            return budget == self.budget
        return not budget or self.slowest_step < budget

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Verdict:
        return cls(**data)


@dataclass(frozen=True)
class Baseline:
    """What the unmutated mesh gives: its scan findings and its checks, cheapest first."""

    findings: frozenset[FindingKey]
    check_order: tuple[str, ...]
    reach: Reach | None = None  # the lines each check reaches; None: judge by every check
    step_budget: float | None = None  # CPU seconds a mutant's step may take; None: default


class MutantTimeout(BaseException):
    """Raised by the alarm; a BaseException so no `except Exception` in a run swallows it."""


def finding_key(finding: Finding) -> FindingKey:
    return (finding.rule, finding.path, finding.symbol, finding.snippet)


def _deadline(seconds: float | None) -> AbstractContextManager[None]:
    """Stop after `seconds` of this process's CPU time (SIGVTALRM), not wall time: a loaded
    machine must not turn a slow kill into a timeout, and the step budget's timers (SIGPROF,
    and SIGALRM, which it shares with pytest-timeout) stay free."""
    return cpu_alarm(seconds or 0, signal.ITIMER_VIRTUAL, signal.SIGVTALRM, MutantTimeout)


def _budget(seconds: float | None) -> AbstractContextManager[None]:
    return nullcontext() if seconds is None else limited(seconds)


def _first_line(text: str | None) -> str:
    return (text or "").strip().splitlines()[0] if (text or "").strip() else ""


def evidence(outcome: Outcome) -> str:
    if outcome.violations:
        return str(outcome.violations[0])
    prefix = "error: " if outcome.verdict == "error" else ""
    return prefix + _first_line(outcome.failure_text)


def build(
    target: MeshTarget, label: str, sources: dict[str, str]
) -> tuple[Path, AdapterFactory]:
    """An isolated, imported copy of `sources`: its package directory and adapter factory."""
    package = package_name(label, sources)
    package_dir, module = isolate(
        sources, package, original=target.package, adapter=target.adapter_module
    )
    factory = cast(AdapterFactory, getattr(module, target.factory))
    # The mesh's identity in example-database keys: the mutant, not its hashed package.
    setattr(factory, MESH_ID_ATTRIBUTE, f"mutant:{label}")
    return package_dir, factory


UNREACHED = ("no check's run on the unmutated mesh executes this statement: a gap in the "
             "driving, not a kill")


def judged_by(target: MeshTarget) -> tuple[str, ...]:
    """Everything that judges a mutant after the scan: the conformance programs (unless
    the target turns them off), then the target's checks."""
    return (CONFORMANCE, *target.checks) if target.conformance else target.checks


def broken_convention(target: MeshTarget, factory: AdapterFactory) -> str | None:
    """The first convention the mesh breaks in adapter-check's programs, as adapter-check
    prints it; None when it keeps them all."""
    _declared, results = conformance(factory, target.params)
    for result in results:
        if result.broken:
            return result.broken[0].line(result.program)
    return None


def _conforms(target: MeshTarget, factory: AdapterFactory) -> Verdict | None:
    try:
        broken = broken_convention(target, factory)
    except Exception as exc:  # the adapter raised in a program
        return _raised(CONFORMANCE, "conformance", exc)
    return None if broken is None else Verdict("killed", CONFORMANCE, "conformance", 1, broken)


def _dynamic(
    target: MeshTarget, factory: AdapterFactory, order: tuple[str, ...], profile: str,
    reaching: tuple[str, ...],
) -> Verdict | None:
    if CONFORMANCE in reaching and (verdict := _conforms(target, factory)) is not None:
        return verdict
    # Seed programs first, one example each, in the checks' own order: they all cost about
    # the same, and a fixed order credits a seed kill to the same check on every machine.
    for check in reaching:
        try:
            programs = seed_programs(check, factory)
        except Exception as exc:  # making the adapter raised
            return _raised(check, "seed", exc)
        for name, program in programs.items():
            try:
                outcome = run_program(check, factory, program, params=target.params, name=name)
            except Exception as exc:  # raised outside a step (making the adapter, say)
                return _raised(check, "seed", exc)
            if not outcome.passed:
                return Verdict("killed", check, "seed", 1, evidence(outcome))
    for check in (c for c in order if c in reaching):  # then the searches, cheapest first
        try:
            outcome = run_invariant(check, factory, profile, params=target.params)
        except Exception as exc:
            return _raised(check, "search", exc)
        if not outcome.passed:
            return Verdict("killed", check, "search", outcome.examples, evidence(outcome))
    return None


def seed_programs(check: str, factory: AdapterFactory) -> dict[str, Program]:
    """`check`'s seed programs as the mesh's adapter can take them (a step it lacks the
    capability for left out, as `run_invariant` leaves it out)."""
    return seed_programs_for(check, capabilities_of(factory(FirstChooser())))


def _raised(check: str, phase: Phase, exc: Exception) -> Verdict:
    """The mesh raised where the harness runs no step (its adapter factory, say): the
    harness run fails on it, so the check kills the mutant."""
    return Verdict("killed", check, phase, 0,
                   f"error: {type(exc).__name__}: {_first_line(str(exc))}")


def evaluate(
    target: MeshTarget,
    baseline: Baseline,
    mutant: EngineMutant,
    *,
    profile: str = "ci",
    timeout: float | None = None,
) -> Verdict:
    """`mutant` applied to the target's sources, then judged (`judge`)."""
    started = time.perf_counter()  # reporting only
    sources = dict(target.sources)
    try:
        sources[mutant.path] = apply(mutant, sources[mutant.path])
    except Exception as exc:  # Cosmic Ray no longer makes this mutant of the file
        return Verdict("incompetent", evidence=f"{type(exc).__name__}: {_first_line(str(exc))}",
                       seconds=time.perf_counter() - started)
    reaching = None
    if baseline.reach is not None:
        reaching = baseline.reach.checks_reaching(
            judged_by(target), mutant.path, mutant.line, target.sources[mutant.path])
    return judge(target, baseline, mutant.id, sources, profile=profile, timeout=timeout,
                 reaching=reaching)


def judge(
    target: MeshTarget,
    baseline: Baseline,
    label: str,
    sources: dict[str, str],
    *,
    profile: str = "ci",
    timeout: float | None = None,
    reaching: tuple[str, ...] | None = None,
) -> Verdict:
    """Build and import `sources` as an isolated copy, then scan, conformance programs,
    seed programs, search;
    the first check that fails kills it. `label` names the copy (the mutant's id);
    `reaching`, where given, the only checks that can tell it from the unmutated mesh
    (`Reach.checks_reaching`): none, and it survives as unreached."""
    started = time.perf_counter()  # reporting only
    package = ""
    package_dir: Path | None = None
    budget: float | None = None
    try:
        with steps_seen() as seen, _deadline(timeout), _budget(baseline.step_budget):
            budget = step_budget_seconds()
            try:
                package = package_name(label, sources)
                package_dir, factory = build(target, label, sources)
            except Exception as exc:  # does not parse, rename or import
                return Verdict("incompetent", evidence=f"{type(exc).__name__}: "
                               f"{_first_line(str(exc))}",
                               seconds=time.perf_counter() - started)
            checks = judged_by(target) if reaching is None else reaching
            verdict = _static(target, baseline, sources)
            if verdict is None and not checks:
                verdict = Verdict("survived", evidence=UNREACHED, unreached=True)
            if verdict is None:
                verdict = _dynamic(target, factory, baseline.check_order, profile, checks)
            verdict = verdict or Verdict("survived")
    except MutantTimeout:
        verdict = Verdict("timeout", evidence=f"ran past {timeout:g} CPU seconds")
    except SystemExit as exc:  # the mutated mesh exits the process: the harness run fails
        verdict = Verdict("killed", "exit", "search", 0, f"SystemExit: {exc.code!r}")
    finally:
        if package:
            forget(package)
    if package_dir is not None:
        shutil.rmtree(package_dir, ignore_errors=True)
    steps = seen()
    return replace(verdict, seconds=time.perf_counter() - started, budget=budget,
                   slowest_step=steps.slowest, hung=steps.hung)


def _static(target: MeshTarget, baseline: Baseline, sources: dict[str, str]) -> Verdict | None:
    if not target.scan:
        return None
    scanned = scan_sources(sources, target.scan_config)
    new = [f for f in scanned.findings if finding_key(f) not in baseline.findings]
    if not new:
        return None
    first = new[0]
    return Verdict("killed", first.rule, "scan", 0,
                   f"{first.path}:{first.line}:{first.column} {first.rule} {first.message}")
