"""The kill matrix as a readable text table, with the verdict lines under it."""

from __future__ import annotations

from invariants.mutants.matrix import Cell, Matrix

KILLED, SURVIVED = "KILLED", "-"


def _mark(cell: Cell | None, expected: bool) -> str:
    if cell is None:
        return ""
    if not cell.killed:
        return "SURVIVED!" if expected else SURVIVED
    if cell.examples == 0:  # a static rule: no examples
        return KILLED + ("*" if expected else "")
    return f"{KILLED} {cell.examples}ex/{cell.steps}st" + ("*" if expected else "")


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
                 "Nex/Mst = examples to the first failure / steps of the shrunk counterexample")
    for check in matrix.reference_failures():
        lines.append(f"reference FAILS {check}: {matrix.reference[check].evidence}")
    for mutant, check in matrix.missing_kills():
        cell = matrix.mutants.get(mutant, {}).get(check)
        why = f" ({cell.evidence})" if cell is not None and cell.evidence else ""
        lines.append(f"MISSING KILL: {mutant} survived {check}{why}")
    verdict = "ok" if matrix.ok else "FAILED"
    lines.append(f"prove: {verdict} in {matrix.seconds:.1f} s")
    return "\n".join(lines) + "\n"
