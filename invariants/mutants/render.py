"""The kill matrix as a readable text table, with the verdict lines under it."""

from __future__ import annotations

import textwrap

from invariants.mutants.matrix import Cell, Matrix

KILLED, SURVIVED, UNREACHED = "KILLED", "-", "~"


def _mark(cell: Cell | None, expected: bool) -> str:
    if cell is None:
        return ""
    if not cell.killed:
        return "SURVIVED!" if expected else UNREACHED if cell.unreached else SURVIVED
    if cell.examples == 0:  # a static rule: no examples
        return KILLED + ("*" if expected else "")
    return f"{KILLED} {cell.examples}ex/{cell.steps}st" + ("*" if expected else "")


def kill_list_text(matrix: Matrix) -> str:
    """The kill matrix one line a mutant, for reports that fit 100 columns: what killed it
    (the kills it lists first), and every listed kill that did not happen."""
    labels = {m: f"{m} {matrix.slugs.get(m, '')}".strip() for m in matrix.mutants}
    width = max((len(label) for label in labels.values()), default=9) + 2
    failures = matrix.reference_failures()
    verdict = "FAILS " + ", ".join(failures) if failures else "pass"
    lines = [f"{'reference':<{width}}{verdict}"]
    for mutant, cells in matrix.mutants.items():
        expected = matrix.expected.get(mutant, ())
        killers = sorted((c for c, cell in cells.items() if cell.killed),
                         key=lambda c: (c not in expected, matrix.checks.index(c)))
        shown = ", ".join(_kill(c, cells[c], c in expected) for c in killers) or "nothing"
        missing = [c for c in expected if not (cells.get(c) and cells[c].killed)]
        lines.append(f"{labels[mutant]:<{width}}killed by {shown}"
                     + (f"; MISSING {', '.join(missing)}" if missing else ""))
    lines.append("")
    lines += textwrap.wrap(
        f"profile {matrix.profile}; * = a kill the mutant lists; (N ex, M st) = examples to "
        "the first failure, steps of the shrunk counterexample; `python -m harness prove` "
        "prints the full matrix", 96)
    return "\n".join(lines) + "\n"


def _kill(check: str, cell: Cell, expected: bool) -> str:
    star = "*" if expected else ""
    if cell.examples == 0:  # a static rule: no examples
        return check + star
    return f"{check}{star} ({cell.examples} ex, {cell.steps} st)"


def matrix_text(matrix: Matrix) -> str:
    checks = matrix.checks
    rows: list[list[str]] = [["", *checks]]
    rows.append(["reference", *("FAIL" if matrix.reference[c].killed else "pass" for c in checks)])
    for mutant, cells in matrix.mutants.items():
        expected = matrix.expected.get(mutant, ())
        label = f"{mutant} {matrix.slugs.get(mutant, '')}".strip()
        rows.append([label, *(_mark(cells.get(c), c in expected) for c in checks)])
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
             for row in rows]
    lines.append("")
    lines.append(f"profile {matrix.profile}; * = a kill the mutant lists; "
                 "Nex/Mst = examples to the first failure / steps of the shrunk counterexample;")
    lines.append("- = a check that ran and (rightly) did not kill it; blank = not run against it")
    if any(cell.unreached for cells in matrix.mutants.values() for cell in cells.values()):
        lines.append("~ = not run: the check's run on the reference never reaches the mutant's "
                     "change, so it passes as there (--every-cell runs it)")
    for check in matrix.reference_failures():
        lines.append(f"reference FAILS {check}: {matrix.reference[check].evidence}")
    for mutant, check in matrix.missing_kills():
        cell = matrix.mutants.get(mutant, {}).get(check)
        why = f" ({cell.evidence})" if cell is not None and cell.evidence else ""
        lines.append(f"MISSING KILL: {mutant} survived {check}{why}")
    verdict = "ok" if matrix.ok else "FAILED"
    lines.append(f"prove: {verdict} in {matrix.seconds:.1f} s")
    return "\n".join(lines) + "\n"
