"""The main job's report: a `CheckResult` (what `harness.jobs.check.run` found) as text
for people (`render`) and as JSON for CI (`to_json`), with the same verdicts.

Each invariant's row carries its evidence: per obligation, how many cases the runs
exercised, its own and the other invariants' (each run judges every check the adapter
admits: `harness.rows.merge`), and where only the others' did, whose. A row whose
obligation no run gave a case is "not exercised", a failure, with the likely cause; an
invariant about a capability the adapter does not declare is "not applicable", listed and
not a failure; an exception from the mesh is shown with its traceback. A failing row shows
its counterexample as pytest does: the step program, the Mermaid diagram and, for an
adapter on the asyncio kit, the schedule its loop ran; the JSON carries them as fields
(`harness.rows.counterexample`), and a violation another invariant's run found says
whose (`found_by`) and whether its program failed again on the row's own machine.
"""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass, field

from harness.rows.row import InvariantRow
from harness.scan_verdict import ScanVerdict
from invariants.checks import CHECKS
from invariants.dynamic.report import obligation_lines
from invariants.mutants.matrix import Matrix
from invariants.mutants.render import kill_list_text
from invariants.scan.report import finding_line, finding_to_json, problem_line


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
                  **({"by_other_runs": lent} if (lent := _lent(row, name)) else {}),
                  **({"cause": row.unexercised[name]} if name in row.unexercised else {}),
                  **({"not_applicable": row.inapplicable[name]}
                     if name in row.inapplicable else {})}
                 for name, count in row.counts.items()
             ],
             "counterexample": row.counterexample.to_json() if row.counterexample else None}
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
    lines = [
        f"mesh-harness check: {result.title}",
        f"adapter {', '.join(result.adapters)}; profile {result.profile}"
        + (f", replaying {result.shared_database}" if result.shared_database else ""),
        "",
        *_scan_section(result),
        "",
        *_invariants_section(result),
        "",
        *_matrix_section(result),
    ]
    lines += [f"error: {error}" for error in result.errors]
    lines += ["", f"Result: {'PASS' if result.ok else 'FAIL'}"]
    return "\n".join(lines) + "\n"


def _scan_section(result: CheckResult) -> list[str]:
    scan = result.scan
    stats = scan.result.stats
    sites = scan.result.emit_sites
    guarded = sum(1 for site in sites if site.guarded)
    per_rule = scan.per_rule()
    lines = [
        f"1. Static scan: {_verdict(result.scan_ok)}",
        f"   {stats.files} file(s) scanned, {len(scan.findings)} finding(s), "
        f"{len(scan.problems)} error(s), {stats.suppressed} suppressed, "
        f"{scan.baselined} baselined",
        f"   emit sites: {len(sites)}, {guarded} guarded by "
        + " or ".join(f"{name}()" for name in result.guard_names),
    ]
    lines += [f"   {rule.id} {rule.slug}: {per_rule[rule.id]}" for rule in scan.result.rules]
    lines += ["   " + finding_line(f).replace("\n", "\n   ") for f in scan.findings]
    lines += ["   " + problem_line(p) for p in scan.problems]
    return lines


def _invariants_section(result: CheckResult) -> list[str]:
    passed = sum(1 for row in result.invariants if row.verdict == "pass")
    applicable = sum(1 for row in result.invariants if row.verdict != "not applicable")
    lines = [
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
        lines += _invariant_row(row, width)
    return lines


def _invariant_row(row: InvariantRow, width: int) -> list[str]:
    title = CHECKS[row.check_id].title.ljust(width)
    on = f" [{row.adapter}]" if row.adapter else ""
    lines = [f"   {row.check_id} {title}  {_row_verdict(row):4}  "
             f"{row.examples:4d} examples  {row.seconds:6.1f} s{on}"]
    if row.verdict == "not applicable":
        lines.append(f"        {row.evidence}")
        return lines + [f"            -  {name}" for name in row.counts]
    if not row.passed and row.evidence and row.verdict != "not exercised":
        lines.append(f"        {row.evidence}")
    if row.traceback:
        lines += ["        " + line for line in row.traceback.rstrip().splitlines()]
    if row.failure:  # the violation line shown above is not repeated
        lines += ["        " + line for line in row.failure.splitlines()
                  if line != row.evidence]
    return lines + _obligation_lines(row)


def _lent(row: InvariantRow, obligation: str) -> dict[str, int]:
    """The cases of `obligation` other invariants' runs gave the row, by invariant."""
    return {by: counts[obligation] for by, counts in row.borrowed.items()
            if counts.get(obligation)}


def _obligation_lines(row: InvariantRow) -> list[str]:
    """The evidence rows (what the counts include from the other invariants' runs first);
    under a count only other invariants' runs gave, whose."""
    indent = " " * 8
    lines = []
    if row.borrowed:
        lines.append(f"{indent}counts include the cases other invariants' runs gave: " + ", ".join(
            f"{by} {sum(counts.values())}" for by, counts in row.borrowed.items()))
    for name, count in row.counts.items():
        lines += obligation_lines({name: count}, row.unexercised, row.inapplicable, indent)
        lent = _lent(row, name)
        if lent and sum(lent.values()) == count:
            lines.append(f"{indent}         exercised only while driving "
                         f"{', '.join(lent)}'s plan{'s' if len(lent) > 1 else ''}")
    return lines


def _matrix_section(result: CheckResult) -> list[str]:
    matrix = result.matrix
    if matrix is None:
        if not result.kill_matrix_skipped:
            return ["3. Kill matrix: not run (--no-prove)"]
        return ["3. Kill matrix: skipped", *textwrap.wrap(
            result.kill_matrix_skipped, 96, initial_indent="   ", subsequent_indent="   ")]
    killed = sum(
        1 for mutant, checks in matrix.expected.items()
        if all(matrix.mutants.get(mutant, {}).get(c) is not None
               and matrix.mutants[mutant][c].killed for c in checks)
    )
    lines = [
        f"3. Kill matrix: {_verdict(matrix.ok)} ({killed} of "
        f"{len(matrix.expected)} mutants killed by every check that must kill them)",
    ]
    lines += ["   " + line if line else "" for line in kill_list_text(matrix).splitlines()]
    lines += [f"   reference FAILS {check}: {matrix.reference[check].evidence}"
              for check in matrix.reference_failures()]
    return lines
