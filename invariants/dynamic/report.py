"""The failure report of a dynamic check: what broke, and the failing run as a diagram.

Hypothesis prints the shrunk step program (`state.*` lines) and the reproduce blob; this
module adds the violations and the trace as a Mermaid sequenceDiagram (the violating
events highlighted), and can write the diagram to a file for a CI artifact.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from invariants.checks.violation import Violation, describe
from invariants.dynamic.mermaid import render_sequence
from invariants.trace import TraceEvent


class InvariantViolated(AssertionError):
    """A dynamic invariant failed on the mesh's trace."""

    def __init__(self, check_ids: Sequence[str], violations: Sequence[Violation]) -> None:
        self.check_ids = tuple(check_ids)
        self.violations = tuple(violations)
        names = ", ".join(sorted({v.check_id for v in violations}))
        super().__init__(f"{names} violated:\n{describe(list(violations))}")


def failure_diagram(
    trace: Sequence[TraceEvent],
    violations: Sequence[Violation],
    *,
    max_lines: int = 120,
) -> str:
    marked = {seq for v in violations for seq in v.seqs}
    title = "; ".join(dict.fromkeys(v.check_id for v in violations)) + " counterexample"
    return render_sequence(trace, marked=marked, max_lines=max_lines, title=title)


def failure_note(diagram: str, diagram_path: Path | None) -> str:
    """The text attached to the falsifying example (printed for the shrunk run only)."""
    lines = ["Trace of the failing run (Mermaid):", "```mermaid", diagram.rstrip(), "```"]
    if diagram_path is not None:
        lines.append(f"(diagram written to {diagram_path})")
    return "\n".join(lines)


def write_diagram(path: Path, diagram: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(diagram, encoding="utf-8")


def failure_text(exc: BaseException) -> str:
    """An exception with Hypothesis' notes: violations, step program, blob, diagram."""
    notes = getattr(exc, "__notes__", [])
    return "\n".join([f"{type(exc).__name__}: {exc}", *notes])
