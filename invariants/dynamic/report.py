"""The failure report of a dynamic check: what broke, and the failing run as a diagram.

Hypothesis prints the shrunk step program (`state.*` lines) and the reproduce blob; this
module adds the violations, the trace as a Mermaid sequenceDiagram (the violating
events highlighted) and the schedule the adapter's loop ran, can write the diagram to a
file for a CI artifact, and reads the step program and the blob back out of a failure
text for the reports that carry them as fields (`check --format json`).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import traceback
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
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


def schedule_of(adapter: object) -> str | None:
    """The ready order the adapter's loop ran, where it records one (the asyncio kit's
    `schedule_text()`: "FIFO", or "FIFO except:" and one line per choice that overtook)."""
    text = getattr(adapter, "schedule_text", None)
    return str(text()) if callable(text) else None


SCHEDULE_HEAD = "Schedule of the failing run (virtual loop): "
# The lines a failure text's step program starts under: a seed program's, the search's.
PROGRAM_HEADS = ("Seed program '", "Falsifying example")
_REPRODUCE = re.compile(r"@reproduce_failure\(.*?\)")


def schedule_note(schedule: str) -> str:
    """The schedule of the failing run, as real code reads it."""
    return f"{SCHEDULE_HEAD}{schedule}"


def step_program(text: str) -> str | None:
    """The step program in a failure text: each `state = ...` and `state.*` line with the
    indented lines that continue it (Hypothesis breaks long arguments over lines), the
    notes between them left out; None where the text has none (a contradiction in the
    run's counts, or a factory that raised before any step)."""
    kept: list[str] = []
    inside = False
    for line in text.splitlines():
        if line.startswith(("state = ", "state.")):
            inside = True
        elif not (inside and line[:1].isspace()):
            inside = False
            continue
        kept.append(line)
    return "\n".join(kept) if kept else None


def reproduce_decorator(text: str) -> str | None:
    """The `@reproduce_failure(...)` decorator Hypothesis printed for the failure, if any
    (a seed program needs none)."""
    found = _REPRODUCE.search(text)
    return found.group(0) if found else None


def write_diagram(path: Path, diagram: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(diagram, encoding="utf-8")


def failure_text(exc: BaseException) -> str:
    """An exception with Hypothesis' notes: violations, step program, blob, diagram."""
    notes = getattr(exc, "__notes__", [])
    return "\n".join([f"{type(exc).__name__}: {exc}", *notes])


# Whose frames a traceback of the mesh's or adapter's exception leaves out: the harness's
# own (the runner, the driver, the plans) and Hypothesis's, which drive every step.
HIDDEN_PACKAGES: tuple[str, ...] = ("invariants", "hypothesis")


_CONTEXTLIB = str(Path(contextlib.__file__).resolve())


@cache
def package_dirs(packages: tuple[str, ...]) -> tuple[str, ...]:
    """The directories of `packages` (each ending with a separator), those found."""
    found = []
    for name in packages:
        spec = importlib.util.find_spec(name)
        for location in (spec.submodule_search_locations or []) if spec is not None else []:
            found.append(str(Path(location).resolve()) + os.sep)
    return tuple(found)


def hidden_frame(filename: str, packages: tuple[str, ...] = HIDDEN_PACKAGES) -> bool:
    """Whether a frame of `filename` is the harness's (or Hypothesis's), not the mesh's."""
    try:
        where = str(Path(filename).resolve())
    except (OSError, RuntimeError):
        return False
    # contextlib's own frames: the `with` blocks the harness wraps each call to the mesh in
    return where.startswith(package_dirs(packages)) or where == _CONTEXTLIB


def _chain(shown: traceback.TracebackException) -> Iterable[traceback.TracebackException]:
    seen: set[int] = set()
    each: traceback.TracebackException | None = shown
    while each is not None and id(each) not in seen:
        seen.add(id(each))
        yield each
        each = each.__cause__ or (None if each.__suppress_context__ else each.__context__)


def own_traceback(exc: BaseException, packages: tuple[str, ...] = HIDDEN_PACKAGES) -> str:
    """`exc` as Python prints it, chained exceptions too, without the frames of
    `packages`: what the mesh and its adapter did (the whole traceback where that would
    leave no frame at all, a fault of the harness itself)."""
    shown = traceback.TracebackException.from_exception(exc)
    chain = list(_chain(shown))
    kept = [[f for f in each.stack if not hidden_frame(f.filename, packages)] for each in chain]
    if any(kept):
        for each, frames in zip(chain, kept, strict=True):
            each.stack = traceback.StackSummary.from_list(frames)
    return "".join(shown.format())


def obligation_lines(counts: Mapping[str, int], unexercised: Mapping[str, str],
                     inapplicable: Mapping[str, str], indent: str) -> list[str]:
    """Per obligation, the cases the run exercised, and under a 0 its likely cause or why
    it does not apply: the evidence rows every report shows alike."""
    lines = []
    for name, count in counts.items():
        lines.append(f"{indent}{count:7d}  {name}")
        if name in unexercised:
            lines.append(f"{indent}         not exercised: {unexercised[name]}")
        elif name in inapplicable:
            lines.append(f"{indent}         not applicable: {inapplicable[name]}")
    return lines
