"""The kill matrix: the reference and every mutant against every check.

Static rules run through the scanner on each (mutated) source tree; a mutant is killed by
a rule when the scan finds something under it that the reference's scan does not. Dynamic
invariants run through `run_invariant`: the seed scenarios' fixed step programs first (so
the known shapes are always tried), then the check's state machine under a Hypothesis
profile; a mutant is killed by a check on a violation. `prove` is the library entry point.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from hypothesis import settings as Settings

from invariants.adapter import AdapterFactory
from invariants.checks import CHECK_IDS, UnknownCheck
from invariants.dynamic.runner import Outcome, run_invariant
from invariants.mutants.base import Mutant, MutantNotApplicable
from invariants.mutants.build import (
    REFERENCE_PACKAGE,
    build_mutant,
    ensure_scratch,
    mutated_sources,
    reference_root,
    tree_sources,
)
from invariants.mutants.executed_lines import Lines
from invariants.mutants.guide import Changes, guidance, measuring
from invariants.mutants.pool import fan_out
from invariants.mutants.registry import select_mutants
from invariants.scan.config import find_pyproject, load_config
from invariants.scan.model import Finding, ScanConfig
from invariants.scan.runner import scan

STATIC_CHECKS: tuple[str, ...] = (
    "MESH001", "MESH002", "MESH003", "MESH004", "MESH005", "MESH006",
)
DYNAMIC_CHECKS: tuple[str, ...] = CHECK_IDS
ALL_CHECKS: tuple[str, ...] = STATIC_CHECKS + DYNAMIC_CHECKS

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Cell:
    """One (subject, check) verdict. For a static rule `examples` and `steps` are 0."""

    killed: bool  # the check failed on the subject
    examples: int  # examples until the first failure (all examples run when it passed)
    steps: int  # steps of the shrunk counterexample (0 when it passed)
    seconds: float
    evidence: str = ""  # the first finding or violation
    errored: bool = False  # the mesh or adapter raised: no verdict (never a kill)
    # Not run: the check's run on the reference never reaches the mutant's change, so it
    # runs as there and passes (`invariants.mutants.guide`); the reference's figures.
    unreached: bool = False
    # A dynamic cell's whole outcome (evidence, counterexample, traceback), for reports.
    outcome: Outcome | None = field(default=None, compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "killed": self.killed,
            "examples": self.examples,
            "steps": self.steps,
            "seconds": round(self.seconds, 3),
        } | ({"unreached": True} if self.unreached else {})


@dataclass
class Matrix:
    profile: str
    checks: tuple[str, ...]
    reference: dict[str, Cell]
    mutants: dict[str, dict[str, Cell]]
    expected: dict[str, tuple[str, ...]]
    slugs: dict[str, str]  # mutant id -> slug
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def reference_failures(self) -> list[str]:
        """Checks the reference fails, or on which it raised."""
        return [c for c, cell in self.reference.items() if cell.killed or cell.errored]

    def missing_kills(self) -> list[tuple[str, str]]:
        """(mutant, check) pairs the mutants list that did not kill."""
        missing = []
        for mutant, checks in self.expected.items():
            cells = self.mutants.get(mutant, {})
            missing += [(mutant, c) for c in checks if c not in cells or not cells[c].killed]
        return missing

    @property
    def ok(self) -> bool:
        return not self.reference_failures() and not self.missing_kills() and not self.errors

    def to_json(self) -> dict[str, Any]:
        failures = set(self.reference_failures())
        return {
            "reference": {
                check: "fail" if check in failures else "pass" for check in self.reference
            },
            "mutants": {
                mutant: {check: cell.to_json() for check, cell in cells.items()}
                for mutant, cells in self.mutants.items()
            },
            "expected": {mutant: list(checks) for mutant, checks in self.expected.items()},
        }


# Static rules -----------------------------------------------------------------------------

FindingKey = tuple[str, str, str, str]


def _key(finding: Finding) -> FindingKey:
    return (finding.rule, finding.path, finding.symbol, finding.snippet)


@dataclass(frozen=True)
class StaticScan:
    findings: tuple[Finding, ...]
    errors: tuple[str, ...]
    seconds: float


def reference_scan_config() -> ScanConfig:
    """The `[tool.harness]` configuration of the repository holding the reference mesh (its
    mutants are scanned with the same names); defaults when there is none. A malformed one
    is a `ConfigError` (a user error) naming the file and key."""
    return load_config(find_pyproject(reference_root()))


def scan_tree(root: Path, config: ScanConfig, cache_dir: Path | None = None) -> StaticScan:
    """Scan one package directory (never imports or runs it); `cache_dir`, where given,
    answers the files it already holds (the scan's own per-file result cache)."""
    started = time.perf_counter()
    result = scan(["."], config, root=root, jobs=1, cache_dir=cache_dir)
    errors = tuple(f"{root}: {p.path}:{p.line} {p.kind}: {p.message}" for p in result.errors)
    return StaticScan(tuple(result.findings), errors, time.perf_counter() - started)


# A mutant differs from the reference in one module, and the scan's result cache answers a
# file by its path, content and configuration: the reference is scanned once into a cache
# the forked workers share (under the build scratch), and each mutant's scan parses only
# its mutated module (the whole-tree passes, MESH001's call graph, still read every file).
# Sources are scanned as the mesh's own package, never as the renamed copy a mutant is
# imported from (whose every import names the copy), so unchanged files are the hits.


def shared_cache() -> Path:
    """The run's per-file scan cache: one directory for the process and its forked workers."""
    return ensure_scratch() / "scan-cache"


def scan_sources(sources: dict[str, str], config: ScanConfig) -> StaticScan:
    """Scan a package given as its modules' sources (relative path -> text): written to a
    directory of this process's own, never imported, answered from the shared cache where
    a module is unchanged."""
    tree = ensure_scratch() / f"pid{os.getpid()}" / "scanned"
    shutil.rmtree(tree, ignore_errors=True)
    for relative, source in sources.items():
        path = tree / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
    try:
        return scan_tree(tree, config, shared_cache())
    finally:
        shutil.rmtree(tree, ignore_errors=True)


def static_cells(
    subject: StaticScan, baseline: StaticScan | None, checks: Sequence[str]
) -> dict[str, Cell]:
    """Per rule: killed when the subject has a finding the baseline (the reference) lacks."""
    known = {_key(f) for f in baseline.findings} if baseline is not None else set()
    cells = {}
    for rule in checks:
        new = [f for f in subject.findings if f.rule == rule and _key(f) not in known]
        evidence = (
            f"{new[0].path}:{new[0].line}:{new[0].column} {rule} {new[0].message}" if new else ""
        )
        cells[rule] = Cell(bool(new), 0, 0, subject.seconds, evidence)
    return cells


# Dynamic invariants ---------------------------------------------------------------------


def dynamic_cell(
    check: str, factory: AdapterFactory, profile: str | Settings, *,
    seed_scenarios: bool = True, seeds_first: Sequence[str] = (),
) -> Cell:
    """The check's seed programs, then its state machine (`run_invariant`) under `profile`
    (a settings object, or the name of one of `invariants.dynamic.profiles`); killed on a
    failing verdict: a violation, or obligations the mesh never let the run exercise.
    `seed_scenarios=False`: the drawn rules alone, to see what search finds. `seeds_first`:
    the mutant's own seed programs (`Mutant.seeds`), tried before the check's others."""
    outcome = run_invariant(check, factory, profile, seed_scenarios=seed_scenarios,
                            seeds_first=seeds_first)
    if outcome.verdict in ("violation", "not exercised"):
        return Cell(True, outcome.examples, outcome.shrunk_steps or 0, outcome.seconds,
                    _first(outcome), outcome=outcome)
    # A mesh that raised is not killed by an invariant, but the error must be seen.
    errored = outcome.verdict == "error"
    evidence = f"error: {_first(outcome)}" if errored else ""
    return Cell(False, outcome.examples, 0, outcome.seconds, evidence, errored=errored,
                outcome=outcome)


def _first(outcome: Outcome) -> str:
    if outcome.violations:
        return str(outcome.violations[0])
    return (outcome.failure_text or "").splitlines()[0] if outcome.failure_text else ""


# The matrix ---------------------------------------------------------------------------------


def _reference_factory() -> AdapterFactory:
    from reference_impl.adapter import make_adapter  # imported only when the reference runs

    return make_adapter


def prove(
    profile: str = "ci",
    mutants: Sequence[str | Mutant] | None = None,
    *,
    checks: Sequence[str] | None = None,
    expected_only: bool = False,
    scan_config: ScanConfig | None = None,
    seed_scenarios: bool = True,
    jobs: int = 1,
    progress: Progress | None = None,
    settings: Settings | None = None,
    guided: bool = True,
) -> Matrix:
    """Run the reference and the chosen mutants (registered names or `Mutant` objects;
    default all) against the chosen checks (default all). `expected_only` runs each mutant
    only against the checks that must kill it; the reference runs every chosen check.
    `seed_scenarios=False` leaves the seed shapes out of the dynamic runs (search alone).
    The dynamic runs use `settings` (a shared database in them) when given, else the named
    `profile`, which names them in reports. Each dynamic cell carries its whole `Outcome`.

    `guided` (where sound: `guide.guidance`): a cell of a check the mutant does not list
    runs only where the reference's run of the check reaches the mutant's change, and is
    otherwise the reference's, marked `unreached` (`invariants.mutants.guide`).

    The dynamic cells run `jobs` at a time in forked workers (`invariants.mutants.pool`),
    the reference's and each mutant's listed kills before the rest of their rows. With
    workers, each mutant is built by the worker that runs its cells, and the scans (the
    reference's, then each mutant's static rules) run here meanwhile; with one job all
    runs here, in matrix order.
    The matrix is the same whatever `jobs` and the order they finish in."""
    started = time.perf_counter()
    config = scan_config or reference_scan_config()
    chosen_checks = _chosen_checks(checks)
    chosen = _chosen(mutants)
    say = progress or (lambda _line: None)
    say("reference")
    lazy = jobs > 1
    subjects = [_Subject("reference", _reference_factory(), chosen_checks, (), {}, [])] + [
        _prepare(m, _wanted(m, chosen_checks, expected_only), say, lazy) for m in chosen
    ]
    ensure_scratch()  # before the fork: the workers' builds go where this process cleans up

    context = _Dynamic(settings or profile, seed_scenarios, {m.id: m for m in chosen},
                       guided=guided)
    dynamic = _run_dynamic(subjects, context, jobs, say,  # with workers, scans meanwhile
                           lambda: _scan_all(subjects, config, say if lazy else None))
    judged = [s for s in subjects if s.applicable]
    rows = {s.name: _row(s, dynamic) for s in judged}
    return Matrix(
        profile=profile,
        checks=chosen_checks,
        reference=rows.pop("reference"),
        mutants={m.id: rows.get(m.id, {}) for m in chosen},
        expected={m.id: tuple(c for c in m.kills if c in chosen_checks) for m in chosen},
        slugs={m.id: m.slug for m in chosen},
        errors=[e for s in subjects
                for e in s.errors + (_dynamic_errors(s, dynamic) if s.applicable else [])],
        seconds=time.perf_counter() - started,
    )


def _scan_all(subjects: Sequence[_Subject], config: ScanConfig, say: Progress | None) -> None:
    """The reference's scan (into the shared cache), then each mutant's static rules."""
    reference_scan = scan_sources(tree_sources(), config)
    _judge_static(subjects[0], reference_scan, None)
    for subject in subjects[1:]:
        _scan_static(subject, config, reference_scan, say)


def _guided(asked: bool, profile: str | Settings, say: Progress) -> bool:
    """Whether the matrix is guided: asked, and sound (`guidance`); said when it is not."""
    unguided = guidance(profile) if asked else None
    if unguided is not None:
        say(f"every cell runs, unguided: {unguided}")
    return asked and unguided is None


def _chosen_checks(checks: Sequence[str] | None) -> tuple[str, ...]:
    """The checks asked for (default all), in matrix order; `UnknownCheck` for others."""
    unknown = [c for c in checks or () if c not in ALL_CHECKS]
    if unknown:
        raise UnknownCheck(f"unknown check(s) {unknown} (known: {', '.join(ALL_CHECKS)})")
    return tuple(c for c in ALL_CHECKS if not checks or c in checks)


@dataclass(frozen=True)
class _Dynamic:
    """How the dynamic checks run, and on what: each subject's factory by name. Given to
    every worker once, when it is forked (the built mutants with it)."""

    profile: str | Settings
    seed_scenarios: bool
    mutants: dict[str, Mutant]  # by id: a subject without a factory is built where it runs
    factories: dict[str, AdapterFactory] = field(default_factory=dict)
    in_process: bool = True  # False: cells travel back from forked workers, pickled
    guided: bool = False  # asked; in the workers: the reference's cells measure their lines


@dataclass
class _Subject:
    """The reference or one mutant: its static cells, the checks it runs and, once built,
    its factory and sources (`applicable` False: the mutant no longer applies; its row is
    left out)."""

    name: str
    factory: AdapterFactory | None  # None: not built yet (its worker builds it)
    checks: tuple[str, ...]
    expected: tuple[str, ...]
    static: dict[str, Cell]
    errors: list[str]
    mutant: Mutant | None = None  # None: the reference
    applicable: bool = True
    sources: dict[str, str] | None = None  # the mutated modules, once built here

    @property
    def dynamic(self) -> tuple[str, ...]:
        return tuple(c for c in self.checks if c in DYNAMIC_CHECKS)


def _static(checks: Sequence[str]) -> list[str]:
    return [c for c in checks if c in STATIC_CHECKS]


def _prepare(mutant: Mutant, wanted: tuple[str, ...], say: Progress, lazy: bool) -> _Subject:
    """One mutant's subject, built here unless `lazy` (with workers, the worker that runs a
    cell builds the mutant; its static rules apply the codemod in `_scan_static`)."""
    subject = _Subject(mutant.id, None, wanted, mutant.kills, {}, [], mutant)
    if lazy:
        return subject
    say(mutant.name)
    try:
        build = build_mutant(mutant)
    except MutantNotApplicable as exc:  # reported; its kills are missing, the rest runs
        say(f"  {exc}")
        return _Subject(mutant.id, None, (), (), {}, [str(exc)], mutant, applicable=False)
    subject.factory, subject.sources = build.factory, build.sources
    return subject


def _scan_static(
    subject: _Subject, config: ScanConfig, reference_scan: StaticScan, say: Progress | None,
) -> None:
    """Fill in a mutant's static cells (a mutant judged by invariants alone is not
    scanned). A mutant whose codemod no longer applies is marked so, as `_prepare` does:
    with workers its dynamic cells may have run, and the matrix leaves them out."""
    if not _static(subject.checks) or subject.mutant is None:
        return
    if say is not None:
        say(f"scanning {subject.name}")
    try:  # built here with one job; with workers, its codemod applied here for the scan
        sources = subject.sources or mutated_sources(subject.mutant)
    except MutantNotApplicable as exc:
        if say is not None:
            say(f"  {exc}")
        subject.checks, subject.errors, subject.applicable = (), [str(exc)], False
        return
    _judge_static(subject, scan_sources(sources, config), reference_scan)


def _judge_static(subject: _Subject, scanned: StaticScan, baseline: StaticScan | None) -> None:
    subject.static = static_cells(scanned, baseline, _static(subject.checks))
    subject.errors += scanned.errors


Task = tuple[str, str]  # (subject name, dynamic check)


def _work_order(subjects: Sequence[_Subject]) -> tuple[list[Task], list[Task]]:
    """The dynamic cells, those that decide a verdict first: every check of the reference
    and each mutant's listed kills, in matrix order; then the rest of each row."""
    deciding = [(s.name, c) for s in subjects for c in s.dynamic
                if s.name == "reference" or c in s.expected]
    chosen = set(deciding)
    return deciding, [(s.name, c) for s in subjects for c in s.dynamic
                      if (s.name, c) not in chosen]


Ran = tuple[Cell, Lines | None]  # a cell, and the lines of the reference its run executed


def _cell(dynamic: _Dynamic, task: Task) -> Ran:
    name, check = task
    mutant = dynamic.mutants.get(name)  # None: the reference
    factory = dynamic.factories.get(name)
    if factory is None:  # built in this worker (once: builds are cached per process)
        try:
            factory = build_mutant(dynamic.mutants[name]).factory
        except MutantNotApplicable as exc:  # no verdict: an error the matrix reports
            return Cell(False, 0, 0, 0.0, f"error: {exc}", errored=True), None
    measured = dynamic.guided and name == "reference"
    with measuring(REFERENCE_PACKAGE, check, reference_root(), measured) as executed:
        cell = dynamic_cell(check, factory, dynamic.profile,
                            seed_scenarios=dynamic.seed_scenarios,
                            seeds_first=mutant.seeds if mutant is not None else ())
    if not (dynamic.in_process or cell.outcome is None or cell.outcome.error is None):
        # The mesh's exception may not pickle; its text and traceback are in the failure text.
        cell = replace(cell, outcome=replace(cell.outcome, error=None))
    return cell, executed() if measured else None


def _run_dynamic(
    subjects: Sequence[_Subject], dynamic: _Dynamic, jobs: int, say: Progress,
    meanwhile: Callable[[], None],
) -> dict[Task, Cell]:
    cells: dict[Task, Cell] = {}
    deciding, rest = _work_order(subjects)
    guided = bool(rest) and _guided(dynamic.guided, dynamic.profile, say)
    # Guided, the rest of each check's cells wait for the reference's run of it.
    waiting = {c: [t for t in rest if t[1] == c] for c in {t[1] for t in rest}}
    changes = Changes(dynamic.mutants, reference_root())

    def finished(task: Task, ran: Ran) -> list[Task]:
        cell, executed = ran
        line = f"  {task[0]} {task[1]}: {'killed' if cell.killed else 'survived'} " \
               f"({cell.seconds:.1f} s)"
        say(_as_reference(line) if task[0] == "reference" else line)
        cells[task] = cell
        if task[0] != "reference" or not guided:
            return []
        run = []
        for waiter in waiting.pop(task[1], []):
            if executed is None or changes.of(waiter[0]).reached_by(executed):
                run.append(waiter)
            else:
                say(f"  {waiter[0]} {waiter[1]}: unreached, passes as the reference does")
                cells[waiter] = replace(cell, seconds=0.0, unreached=True)
        return run

    factories = {s.name: s.factory for s in subjects if s.factory is not None}
    context = replace(dynamic, factories=factories, in_process=jobs <= 1, guided=guided)
    fan_out(context, deciding if guided else deciding + rest, _cell, jobs, finished,
            meanwhile)
    return cells


def _row(subject: _Subject, dynamic: dict[Task, Cell]) -> dict[str, Cell]:
    cells = {**subject.static, **{c: dynamic[(subject.name, c)] for c in subject.dynamic}}
    return {c: cells[c] for c in subject.checks}


def _dynamic_errors(subject: _Subject, dynamic: dict[Task, Cell]) -> list[str]:
    """A mesh that raised in a dynamic cell, in matrix order whatever order the cells ran."""
    found = (dynamic[(subject.name, c)] for c in subject.dynamic)
    return [f"{subject.name} {check}: {cell.evidence}"
            for check, cell in zip(subject.dynamic, found, strict=True) if cell.errored]


def _chosen(mutants: Sequence[str | Mutant] | None) -> tuple[Mutant, ...]:
    """Registered mutants by name (default: all), or `Mutant` objects as given."""
    if not mutants:
        return select_mutants(None)
    named = select_mutants([m for m in mutants if isinstance(m, str)])
    given = tuple(m for m in mutants if isinstance(m, Mutant))
    return (named if any(isinstance(m, str) for m in mutants) else ()) + given


def _as_reference(line: str) -> str:
    """The reference passes or fails a check; it is not killed."""
    return line.replace("killed", "FAIL").replace("survived", "pass")


def _wanted(mutant: Mutant, checks: tuple[str, ...], expected_only: bool) -> tuple[str, ...]:
    return tuple(c for c in checks if c in mutant.kills) if expected_only else checks
