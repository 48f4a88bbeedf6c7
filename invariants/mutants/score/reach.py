"""Which checks reach which lines of the mesh: measured once on the unmutated copy, read for
every mutant.

In the `ci` profile a check's run is a pure function of the mesh's code: its seed programs
are fixed and its search is derandomized with the check's own seed and no database
(`invariants.dynamic.mesh_keys`). A mutant whose line a check's run on the unmutated mesh
never executes therefore runs that check exactly as the unmutated mesh does, and passes it:
judging the mutant by that check can only repeat the unmutated verdict. `measure` records,
with coverage.py (fenced to the copy's own files), the lines the import executes and the
lines each check's seed programs and search execute; `checks_reaching` keeps, for one
mutant, the checks whose runs touch the statement it mutates. Lines the import executes
(module constants, definitions, default values) count as reached by every check, and a
mutant is matched by its whole innermost statement, never by one line of it: both err
toward running a check, never toward skipping one.

The guidance holds only for a derandomized profile without a database
(`executed_lines.sound_for`); any other profile judges every mutant by every check.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from invariants.mutants.executed_lines import Lines

IMPORT = "<import>"  # the context of the lines the copy's import executes


@dataclass(frozen=True)
class Reach:
    """Executed lines of the unmutated mesh, per context: `IMPORT` and each check id."""

    lines: Mapping[str, Lines]

    def checks_reaching(self, checks: tuple[str, ...], path: str, line: int,
                        source: str) -> tuple[str, ...]:
        """The checks (of `checks`, in that order) whose runs execute the innermost
        statement of `source` (the unmutated module at `path`) holding `line`; every check
        when the import executes it."""
        first, last = statement_span(source, line)
        touched = set(range(first, last + 1))

        def runs(context: str) -> bool:
            return not touched.isdisjoint(self.lines.get(context, {}).get(path, frozenset()))

        if runs(IMPORT):
            return checks
        return tuple(check for check in checks if runs(check))


@lru_cache(maxsize=256)
def _statements(source: str) -> tuple[tuple[int, int], ...]:
    spans = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.stmt):
            spans.append((node.lineno, node.end_lineno or node.lineno))
    return tuple(spans)


def statement_span(source: str, line: int) -> tuple[int, int]:
    """The first and last line of the innermost statement holding `line`; the line alone
    where none does (a blank or a comment)."""
    holding = [(first, last) for first, last in _statements(source) if first <= line <= last]
    return min(holding, key=lambda span: span[1] - span[0]) if holding else (line, line)

