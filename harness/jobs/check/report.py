"""The main job: every check against one mesh, as one report.

1. the static scan of the mesh's source (`subject`: the configured repository's paths and
   names, or the installed `reference_impl` package);
2. the adapter conformance check, then every dynamic invariant through each adapter;
3. the kill matrix, where the reference's pre-fix mutants apply: each against the checks
   that must kill it (skipped, with the reason, on another team's mesh).

With the kill matrix, the reference's invariant verdicts are the matrix's reference row
(seed programs plus state machine), so no invariant runs twice; the outcomes behind that
row are collected as the matrix runs them (`collecting`), for their evidence. With a
shared database, every invariant run replays what fuzzing sessions saved there for its
mesh first.

Each invariant's row carries its evidence: per obligation, how many cases the run
exercised. A row whose run saw no case of some obligation is "not exercised", a failure,
with the likely cause; an invariant about a capability the adapter does not declare is
"not applicable", listed and not a failure; an exception from the mesh is shown with its
traceback.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from harness.jobs.check.subject import KILL_MATRIX_SKIPPED, Subject, bundled_reference
from harness.scan_verdict import ScanVerdict, load_baseline, run_scan
from harness.shared_database import SharedDatabase
from invariants.adapter import AdapterExited, AdapterFactory
from invariants.checks import CHECKS
from invariants.conformance.programs import conformance
from invariants.dynamic.profiles import replaying
from invariants.dynamic.report import own_traceback
from invariants.dynamic.runner import Outcome, collecting, run_invariant
from invariants.mutants.matrix import Matrix, prove
from invariants.mutants.render import kill_list_text
from invariants.scan.model import ScanConfig
from invariants.scan.report import finding_line, finding_to_json, problem_line
from invariants.scan.rules import RULES

Progress = Callable[[str], None]


@dataclass(frozen=True)
class InvariantRow:
    check_id: str
    passed: bool
    examples: int
    seconds: float  # for people; never part of a verdict
    evidence: str = ""  # the first violation, the error, or why it was not exercised
    verdict: str = ""  # the runner's verdict ("pass", "violation", "not exercised", "error")
    counts: Mapping[str, int] = field(default_factory=dict)  # obligation -> cases exercised
    unexercised: Mapping[str, str] = field(default_factory=dict)  # obligation -> likely cause
    adapter: str = ""  # the adapter spec, where more than one is judged
    traceback: str = ""  # "error": the mesh's exception as Python prints it
    counterexample: str = ""  # "violation": the program that shows it (the diagram left out)
    # Obligations of an optional capability the adapter lacks -> why (listed, not passed).
    inapplicable: Mapping[str, str] = field(default_factory=dict)


@dataclass
class CheckResult:
    profile: str
    scan: ScanVerdict
    invariants: list[InvariantRow]
    matrix: Matrix | None
    errors: list[str] = field(default_factory=list)
    shared_database: str | None = None  # the SPEC every invariant run replayed
    title: str = "the bundled reference mesh"
    mesh: str = "the reference mesh"
    adapters: tuple[str, ...] = ()
    conformance: list[str] = field(default_factory=list)  # broken conventions, one line each
    conformance_programs: int = 0
    kill_matrix_skipped: str = ""  # why the kill matrix did not run, where it did not
    guard_names: tuple[str, ...] = ("may_answer",)  # the scan's guards, in the repo's words

    @property
    def scan_ok(self) -> bool:
        return not self.scan.findings and not self.scan.problems

    @property
    def invariants_ok(self) -> bool:
        return all(row.passed for row in self.invariants) and not self.conformance

    @property
    def ok(self) -> bool:
        matrix_ok = self.matrix is None or self.matrix.ok
        return self.scan_ok and self.invariants_ok and matrix_ok and not self.errors


def _invariants_alone(subject: Subject, check_ids: Sequence[str], say: Progress
                      ) -> list[InvariantRow]:
    rows = []
    for spec, factory in subject.factories.items():
        for check_id in check_ids:
            outcome = run_invariant(check_id, factory, subject.profile, params=subject.params,
                                    seed_scenarios=subject.seed_scenarios)
            say(f"  {check_id} on {spec}: {outcome.verdict} ({outcome.seconds:.1f} s)")
            rows.append(_row(outcome, spec if len(subject.factories) > 1 else ""))
    return rows


def _first_line(outcome: Outcome) -> str:
    if outcome.verdict == "not applicable" and outcome.failure_text:
        return outcome.failure_text.splitlines()[0]
    if outcome.violations:
        return str(outcome.violations[0])
    if outcome.verdict == "not exercised":
        return "not exercised: " + "; ".join(
            f"{name} (0): {cause}" for name, cause in outcome.unexercised.items()
        )
    if outcome.verdict == "error" and outcome.failure_text:
        return outcome.failure_text.splitlines()[0]
    return ""


def _row(outcome: Outcome, adapter: str = "") -> InvariantRow:
    error = outcome.error
    trace = own_traceback(error) if error is not None else ""  # the mesh's frames, not ours
    return InvariantRow(outcome.check_id, outcome.ok, outcome.examples, outcome.seconds,
                        _first_line(outcome), outcome.verdict, dict(outcome.evidence),
                        dict(outcome.unexercised), adapter, trace, _counterexample(outcome),
                        dict(outcome.inapplicable))


def _counterexample(outcome: Outcome) -> str:
    """The failure text of a violation up to its diagram: the violations, the shrunk step
    program and the reproduce blob (the diagram is in the pytest item and the JSON)."""
    if outcome.verdict != "violation" or not outcome.failure_text:
        return ""
    return outcome.failure_text.split("Trace of the failing run (Mermaid)", 1)[0].rstrip()


def _invariants_of(
    matrix: Matrix, collected: Sequence[tuple[AdapterFactory, Outcome]]
) -> list[InvariantRow]:
    """The matrix's reference row, each cell with the outcome the matrix ran it from."""
    from reference_impl.adapter import make_adapter  # the factory the matrix ran it with

    outcomes = {o.check_id: o for factory, o in collected if factory is make_adapter}
    rows = []
    for check, cell in matrix.reference.items():
        if check not in CHECKS:
            continue
        outcome = outcomes.get(check)
        if outcome is not None:
            rows.append(_row(outcome))
        else:  # not run through `run_invariant` here: the cell is all there is
            rows.append(InvariantRow(check, not cell.killed, cell.examples, cell.seconds,
                                     cell.evidence))
    return rows


def run_check(
    profile: str = "ci",
    *,
    kill_matrix: bool = True,
    invariants: Sequence[str] | None = None,
    progress: Progress | None = None,
    shared_database: SharedDatabase | None = None,
    subject: Subject | None = None,
) -> CheckResult:
    """The whole job on `subject` (default: the bundled reference under `profile`);
    `invariants` narrows the invariants run without the kill matrix. `shared_database` is
    replayed by every invariant run, in place of whatever `HARNESS_SHARED_DATABASE` names
    (None: no shared database)."""
    judged = subject or bundled_reference(profile)
    shared = shared_database
    say = progress or (lambda _line: None)
    with replaying(shared.spec if shared else None, shared.origin if shared else ""):
        result = _run_check(judged, kill_matrix, invariants or judged.invariants, say)
    result.shared_database = shared.spec if shared else None
    return result


def _run_check(
    subject: Subject, kill_matrix: bool, invariants: Sequence[str], say: Progress
) -> CheckResult:
    say(f"scanning {subject.root}")
    verdict = run_scan(list(subject.scan_paths), subject.scan_config, subject.root,
                       cache_dir=subject.cache_dir, baseline=load_baseline(subject.baseline))
    broken, programs = _conformance(subject, say)
    result = CheckResult(subject.profile, verdict, [], None, title=subject.title,
                         mesh=subject.mesh, adapters=tuple(subject.factories),
                         guard_names=_guards(subject.scan_config),
                         conformance=broken, conformance_programs=programs)
    if not kill_matrix or not subject.kill_matrix:
        if kill_matrix:
            result.kill_matrix_skipped = KILL_MATRIX_SKIPPED.format(mesh=subject.mesh)
        say(f"dynamic invariants on {subject.mesh}")
        result.invariants = _invariants_alone(subject, invariants, say)
        return result
    say("kill matrix (the reference first, then each mutant against the checks it must fail)")
    with collecting() as collected:
        result.matrix = prove(subject.profile, expected_only=True, progress=say,
                              seed_scenarios=subject.seed_scenarios)
    result.invariants = _invariants_of(result.matrix, collected)
    result.errors = list(result.matrix.errors)
    return result


def _guards(config: ScanConfig) -> tuple[str, ...]:
    names = config.options.get("guard_functions", ("may_answer",))
    return tuple(names) if isinstance(names, tuple) and names else ("may_answer",)


def _conformance(subject: Subject, say: Progress) -> tuple[list[str], int]:
    """Each adapter through the conformance programs: the broken conventions, one line
    each (an adapter that raises is one line here; its traceback shows in its rows)."""
    lines: list[str] = []
    programs = 0
    for spec, factory in subject.factories.items():
        say(f"adapter conformance: {spec}")
        try:
            _, results = conformance(factory, subject.params)
        except AdapterExited as exc:  # names the adapter and what it raised already
            lines.append(str(exc))
            continue
        except Exception as exc:  # the invariant runs show the traceback
            lines.append(f"{spec}: the adapter raised {type(exc).__name__}: {exc}")
            continue
        programs += len(results)
        lines += [f"{spec}: {b.line(r.program)}" for r in results for b in r.broken]
    return lines, programs


def to_json(result: CheckResult) -> str:
    """The report as JSON for CI: the same verdicts as `render`, keys in a fixed order."""
    scan = result.scan
    document = {
        "ok": result.ok,
        "judged": result.title,
        "profile": result.profile,
        "shared_database": result.shared_database,
        "scan": {
            "ok": result.scan_ok,
            "files": scan.result.stats.files,
            "findings": [finding_to_json(finding) for finding in scan.findings],
            "errors": [problem.to_json() for problem in scan.problems],
            "emit_sites": len(scan.result.emit_sites),
            "guarded_emit_sites": sum(1 for site in scan.result.emit_sites if site.guarded),
        },
        "adapter_conformance": {
            "ok": not result.conformance, "programs": result.conformance_programs,
            "broken": result.conformance,
        },
        "invariants": [
            {"check": row.check_id, **({"adapter": row.adapter} if row.adapter else {}),
             "passed": row.passed, "verdict": row.verdict,
             "examples": row.examples, "evidence": row.evidence,
             "obligations": [
                 {"obligation": name, "exercised": count,
                  **({"cause": row.unexercised[name]} if name in row.unexercised else {}),
                  **({"not_applicable": row.inapplicable[name]}
                     if name in row.inapplicable else {})}
                 for name, count in row.counts.items()
             ]}
            for row in result.invariants
        ],
        "kill_matrix": None if result.matrix is None else {
            "ok": result.matrix.ok, **result.matrix.to_json()
        },
        "kill_matrix_skipped": result.kill_matrix_skipped or None,
        "errors": result.errors,
    }
    return json.dumps(document, indent=2) + "\n"


def _verdict(ok: bool) -> str:
    return "pass" if ok else "FAIL"


def _row_verdict(row: InvariantRow) -> str:
    if row.verdict in ("not exercised", "not applicable"):
        return row.verdict.upper() if row.verdict == "not exercised" else row.verdict
    return _verdict(row.passed)


def render(result: CheckResult) -> str:
    scan = result.scan
    stats = scan.result.stats
    sites = scan.result.emit_sites
    guarded = sum(1 for site in sites if site.guarded)
    per_rule = scan.per_rule()
    lines = [
        f"mesh-harness check: {result.title}",
        f"adapter {', '.join(result.adapters)}; profile {result.profile}"
        + (f", replaying {result.shared_database}" if result.shared_database else ""),
        "",
        f"1. Static scan: {_verdict(result.scan_ok)}",
        f"   {stats.files} file(s) scanned, {len(scan.findings)} finding(s), "
        f"{len(scan.problems)} error(s), {stats.suppressed} suppressed",
        f"   emit sites: {len(sites)}, {guarded} guarded by "
        + " or ".join(f"{name}()" for name in result.guard_names),
    ]
    lines += [f"   {rule} {slug}: {per_rule[rule]}" for rule, slug in RULES.items()]
    lines += ["   " + finding_line(f).replace("\n", "\n   ") for f in scan.findings]
    lines += ["   " + problem_line(p) for p in scan.problems]
    passed = sum(1 for row in result.invariants if row.verdict == "pass")
    applicable = sum(1 for row in result.invariants if row.verdict != "not applicable")
    lines += [
        "",
        f"2. Dynamic invariants on {result.mesh}: {_verdict(result.invariants_ok)} "
        f"({passed} of {applicable} passed"
        + (f", {len(result.invariants) - applicable} not applicable"
           if applicable < len(result.invariants) else "") + ")",
        f"   adapter conformance: {_verdict(not result.conformance)} "
        f"({result.conformance_programs} program(s), {len(result.conformance)} broken "
        "convention(s); see docs/adapter.md)",
    ]
    lines += [f"     {line}" for line in result.conformance]
    width = max((len(CHECKS[row.check_id].title) for row in result.invariants), default=0)
    for row in result.invariants:
        title = CHECKS[row.check_id].title.ljust(width)
        on = f" [{row.adapter}]" if row.adapter else ""
        lines.append(f"   {row.check_id} {title}  {_row_verdict(row):4}  "
                     f"{row.examples:4d} examples  {row.seconds:6.1f} s{on}")
        if row.verdict == "not applicable":
            lines.append(f"        {row.evidence}")
            lines += [f"            -  {name}" for name in row.counts]
            continue
        if not row.passed and row.evidence and row.verdict != "not exercised":
            lines.append(f"        {row.evidence}")
        if row.traceback:
            lines += ["        " + line for line in row.traceback.rstrip().splitlines()]
        if row.counterexample:  # its head repeats the violation line shown above
            lines += ["        " + line for line in row.counterexample.splitlines()[1:]
                      if line != row.evidence]
        for name, count in row.counts.items():
            lines.append(f"        {count:7d}  {name}")
            if name in row.unexercised:
                lines.append(f"                 not exercised: {row.unexercised[name]}")
            elif name in row.inapplicable:
                lines.append(f"                 not applicable: {row.inapplicable[name]}")
    if result.matrix is not None:
        killed = sum(
            1 for mutant, checks in result.matrix.expected.items()
            if all(result.matrix.mutants.get(mutant, {}).get(c) is not None
                   and result.matrix.mutants[mutant][c].killed for c in checks)
        )
        lines += [
            "",
            f"3. Kill matrix: {_verdict(result.matrix.ok)} ({killed} of "
            f"{len(result.matrix.expected)} mutants killed by every check that must kill them)",
        ]
        lines += ["   " + line if line else ""
                  for line in kill_list_text(result.matrix).splitlines()]
        lines += [f"   reference FAILS {check}: {result.matrix.reference[check].evidence}"
                  for check in result.matrix.reference_failures()]
    elif result.kill_matrix_skipped:
        lines += ["", "3. Kill matrix: skipped"]
        lines += textwrap.wrap(result.kill_matrix_skipped, 96, initial_indent="   ",
                               subsequent_indent="   ")
    else:
        lines += ["", "3. Kill matrix: not run (--no-prove)"]
    lines += [f"error: {error}" for error in result.errors]
    lines += ["", f"Result: {'PASS' if result.ok else 'FAIL'}"]
    return "\n".join(lines) + "\n"
