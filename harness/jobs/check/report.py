"""The main job: every check against the bundled reference mesh, as one report.

1. the static scan of the installed `reference_impl` package (default names, which fit it);
2. every dynamic invariant on the reference mesh under a Hypothesis profile;
3. the kill matrix: each pre-fix mutant against the checks that must kill it.

With the kill matrix, the reference's invariant verdicts are the matrix's reference row
(seed programs plus state machine), so no invariant runs twice; the outcomes behind that
row are collected as the matrix runs them (`collecting`), for their evidence. With a
shared database, every invariant run replays what fuzzing sessions saved there for its
mesh first.

Each invariant's row carries its evidence: per obligation, how many cases the run
exercised. A row whose run saw no case of some obligation is "not exercised", a failure,
with the likely cause.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from harness.scan_verdict import ScanVerdict, run_scan
from harness.shared_database import SharedDatabase
from invariants.adapter import AdapterFactory
from invariants.checks import CHECK_IDS, CHECKS
from invariants.dynamic.profiles import replaying
from invariants.dynamic.runner import Outcome, collecting, run_invariant
from invariants.mutants.build import reference_root
from invariants.mutants.matrix import Matrix, prove, reference_scan_config
from invariants.mutants.render import matrix_text
from invariants.scan.model import RULES
from invariants.scan.report import finding_line, finding_to_json, problem_line

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


@dataclass
class CheckResult:
    profile: str
    scan: ScanVerdict
    invariants: list[InvariantRow]
    matrix: Matrix | None
    errors: list[str] = field(default_factory=list)
    shared_database: str | None = None  # the SPEC every invariant run replayed

    @property
    def scan_ok(self) -> bool:
        return not self.scan.findings and not self.scan.problems

    @property
    def invariants_ok(self) -> bool:
        return all(row.passed for row in self.invariants)

    @property
    def ok(self) -> bool:
        matrix_ok = self.matrix is None or self.matrix.ok
        return self.scan_ok and self.invariants_ok and matrix_ok and not self.errors


def _invariants_alone(
    profile: str, check_ids: Sequence[str], say: Progress
) -> list[InvariantRow]:
    from reference_impl import adapter  # the mesh under test, only when run

    rows = []
    for check_id in check_ids:
        outcome = run_invariant(check_id, adapter.make_adapter, profile)
        say(f"  {check_id}: {outcome.verdict} ({outcome.seconds:.1f} s)")
        rows.append(_row(outcome))
    return rows


def _first_line(outcome: Outcome) -> str:
    if outcome.violations:
        return str(outcome.violations[0])
    if outcome.verdict == "not exercised":
        return "not exercised: " + "; ".join(
            f"{name} (0): {cause}" for name, cause in outcome.unexercised.items()
        )
    if outcome.verdict == "error" and outcome.failure_text:
        return outcome.failure_text.splitlines()[0]
    return ""


def _row(outcome: Outcome) -> InvariantRow:
    return InvariantRow(outcome.check_id, outcome.passed, outcome.examples, outcome.seconds,
                        _first_line(outcome), outcome.verdict, dict(outcome.evidence),
                        dict(outcome.unexercised))


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
    invariants: Sequence[str] = CHECK_IDS,
    progress: Progress | None = None,
    shared_database: SharedDatabase | None = None,
) -> CheckResult:
    """The whole job; `invariants` narrows the invariants run without the kill matrix.
    `shared_database` is replayed by every invariant run, in place of whatever
    `HARNESS_SHARED_DATABASE` names (None: no shared database)."""
    shared = shared_database
    with replaying(shared.spec if shared else None, shared.origin if shared else ""):
        result = _run_check(profile, kill_matrix, invariants, progress or (lambda _line: None))
    result.shared_database = shared.spec if shared else None
    return result


def _run_check(
    profile: str, kill_matrix: bool, invariants: Sequence[str], say: Progress
) -> CheckResult:
    root = reference_root()
    say(f"scanning {root}")
    # No cache: an installed package directory may be read-only, and the scan is quick.
    # The names are those the kill matrix scans the reference with.
    verdict = run_scan(["."], reference_scan_config(), root, cache_dir=None, baseline=None)
    if not kill_matrix:
        say("dynamic invariants on the reference mesh")
        return CheckResult(profile, verdict, _invariants_alone(profile, invariants, say), None)
    say("kill matrix (the reference first, then each mutant against the checks it must fail)")
    with collecting() as collected:
        matrix = prove(profile, expected_only=True, progress=say)
    rows = _invariants_of(matrix, collected)
    errors = list(matrix.errors)
    return CheckResult(profile, verdict, rows, matrix, errors)


def to_json(result: CheckResult) -> str:
    """The report as JSON for CI: the same verdicts as `render`, keys in a fixed order."""
    scan = result.scan
    document = {
        "ok": result.ok,
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
        "invariants": [
            {"check": row.check_id, "passed": row.passed, "verdict": row.verdict,
             "examples": row.examples, "evidence": row.evidence,
             "obligations": [
                 {"obligation": name, "exercised": count,
                  **({"cause": row.unexercised[name]} if name in row.unexercised else {})}
                 for name, count in row.counts.items()
             ]}
            for row in result.invariants
        ],
        "kill_matrix": None if result.matrix is None else {
            "ok": result.matrix.ok, **result.matrix.to_json()
        },
        "errors": result.errors,
    }
    return json.dumps(document, indent=2) + "\n"


def _verdict(ok: bool) -> str:
    return "pass" if ok else "FAIL"


def _row_verdict(row: InvariantRow) -> str:
    return "NOT EXERCISED" if row.verdict == "not exercised" else _verdict(row.passed)


def render(result: CheckResult) -> str:
    scan = result.scan
    stats = scan.result.stats
    sites = scan.result.emit_sites
    guarded = sum(1 for site in sites if site.guarded)
    per_rule = scan.per_rule()
    lines = [
        f"mesh-harness check: the bundled reference mesh ({scan.result.root}), "
        f"profile {result.profile}"
        + (f", replaying {result.shared_database}" if result.shared_database else ""),
        "",
        f"1. Static scan: {_verdict(result.scan_ok)}",
        f"   {stats.files} file(s) scanned, {len(scan.findings)} finding(s), "
        f"{len(scan.problems)} error(s), {stats.suppressed} suppressed",
        f"   emit sites: {len(sites)}, {guarded} guarded by may_answer()",
    ]
    lines += [f"   {rule} {slug}: {per_rule[rule]}" for rule, slug in RULES.items()]
    lines += ["   " + finding_line(f).replace("\n", "\n   ") for f in scan.findings]
    lines += ["   " + problem_line(p) for p in scan.problems]
    passed = sum(1 for row in result.invariants if row.passed)
    lines += [
        "",
        f"2. Dynamic invariants on the reference mesh: {_verdict(result.invariants_ok)} "
        f"({passed} of {len(result.invariants)} passed)",
    ]
    width = max((len(CHECKS[row.check_id].title) for row in result.invariants), default=0)
    for row in result.invariants:
        title = CHECKS[row.check_id].title.ljust(width)
        lines.append(f"   {row.check_id} {title}  {_row_verdict(row):4}  "
                     f"{row.examples:4d} examples  {row.seconds:6.1f} s")
        if not row.passed and row.evidence and row.verdict != "not exercised":
            lines.append(f"        {row.evidence}")
        for name, count in row.counts.items():
            lines.append(f"        {count:7d}  {name}")
            if name in row.unexercised:
                lines.append(f"                 not exercised: {row.unexercised[name]}")
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
        lines += ["   " + line if line else "" for line in matrix_text(result.matrix).splitlines()]
    else:
        lines += ["", "3. Kill matrix: not run (--no-prove)"]
    lines += [f"error: {error}" for error in result.errors]
    lines += ["", f"Result: {'PASS' if result.ok else 'FAIL'}"]
    return "\n".join(lines) + "\n"
