"""Which cells of the kill matrix can differ from the reference's: the lines a check's run
executes on the reference, read against the code a mutant changes.

Under a derandomized profile without a database (`executed_lines.sound_for`) a check's run is a pure
function of the mesh's code: the same seed programs, the same search. A mutant changes one
module, and its run of a check is the reference's run, step for step, until it first
executes changed code. Changed code inside a function runs only in a call of that function,
and every call executes a line of its body; so a check whose run on the reference executes
no line of the body of the innermost function holding a change runs on the mutant exactly
as on the reference, and passes as it does there. Code outside every function body (a
module or class statement, a decorator, a default value) runs at import: every check reaches
it. The unit is a whole body, never a statement: an inserted statement has no line of its
own on the reference, while every path to it passes through its function's body. It
relies on what the matrix relies on already: a run does not depend on what ran before it
in the process (a cache the mesh filled once would hide, from the reference's later runs,
lines a mutant's fresh copy executes).
"""

from __future__ import annotations

import ast
import difflib
import importlib.util
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import settings as Settings

from invariants.mutants.base import Mutant
from invariants.mutants.executed_lines import Lines, Recorder, sound_for

Span = tuple[int, int]  # first and last line, inclusive


def guidance(profile: str | Settings) -> str | None:
    """Why the matrix under `profile` (a profile's name, or settings) cannot be guided;
    None where it can."""
    if not sound_for(profile):
        return "its runs are not derandomized without a database"
    if importlib.util.find_spec("coverage") is None:
        return "coverage.py is not installed (pip install 'mesh-harness[mutate]')"
    return None


@contextmanager
def measuring(package: str, context: str, root: Path,
              wanted: bool = True) -> Iterator[Callable[[], Lines]]:
    """Measure the lines of `package` (its directory `root`) the block runs; the callable
    gives them, by path relative to `root`, once the block has ended. `wanted=False`:
    nothing is measured, and the callable gives no lines."""
    lines: dict[str, frozenset[int]] = {}
    if not wanted:
        yield lambda: lines
        return
    recorder = Recorder(package)
    with recorder.measuring() as phase:
        phase(context)
        yield lambda: lines
    lines.update(recorder.executed(root).get(context, {}))


@dataclass
class Changes:
    """Each mutant's `Change` against the reference's sources under `root`, worked out the
    first time it is asked for."""

    mutants: Mapping[str, Mutant]
    root: Path
    _known: dict[str, Change] = field(default_factory=dict)

    def of(self, mutant_id: str) -> Change:
        if mutant_id not in self._known:
            mutant = self.mutants[mutant_id]
            source = (self.root / mutant.path).read_text(encoding="utf-8")
            self._known[mutant_id] = change_of(mutant, source)
        return self._known[mutant_id]


@dataclass(frozen=True)
class Change:
    """Where a mutant's change can run: the bodies (line spans of the reference's module
    `path`) of the functions holding it, or at import."""

    path: str
    bodies: tuple[Span, ...]
    at_import: bool

    def reached_by(self, executed: Lines) -> bool:
        """Whether a run that executed `executed` (on the reference) can run the change."""
        if self.at_import:
            return True
        lines = executed.get(self.path, frozenset())
        return any(first <= line <= last for line in lines for first, last in self.bodies)


def change_of(mutant: Mutant, before: str) -> Change:
    """The change `mutant` makes to `before` (the reference's source of `mutant.path`);
    at import, to be safe, where the mutant does not apply."""
    try:
        after = mutant.apply(before, filename=mutant.path)
    except Exception:  # any failure: every check runs, nothing is decided here
        return Change(mutant.path, (), True)
    return change_between(mutant.path, before, after)


def change_between(path: str, before: str, after: str) -> Change:
    """Where the edit from `before` to `after` (sources of the module `path`) can run; at
    import, to be safe, where either does not parse."""
    try:
        old, new = _bodies(before), _bodies(after)
    except SyntaxError:
        return Change(path, (), True)
    bodies: list[Span] = []
    at_import = False
    for first, last, in_new in _edits(before, after):
        name = _innermost(new if in_new else old, first, last)
        found = old.get(name, ()) if name is not None else ()
        at_import |= not found
        bodies += found
    return Change(path, tuple(dict.fromkeys(bodies)), at_import)


def _edits(before: str, after: str) -> Iterator[tuple[int, int, bool]]:
    """The edited lines, each run of them once on the side where it has lines (True: on
    `after`'s); a replacement on both sides."""
    matcher = difflib.SequenceMatcher(None, before.splitlines(), after.splitlines(),
                                      autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if i2 > i1:
            yield i1 + 1, i2, False
        if j2 > j1:
            yield j1 + 1, j2, True


Bodies = dict[str, tuple[Span, ...]]  # qualified function name -> the spans of its bodies


def _bodies(source: str) -> Bodies:
    """Each function's body span by qualified name (`Class.method.inner`); a name defined
    more than once (a property's getter and setter) has every body."""
    found: dict[str, list[Span]] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    end = child.end_lineno or child.body[-1].lineno
                    found.setdefault(name, []).append((child.body[0].lineno, end))
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return {name: tuple(spans) for name, spans in found.items()}


def _innermost(bodies: Bodies, first: int, last: int) -> str | None:
    """The function whose body holds lines `first`..`last` most closely; None at import."""
    holding = [(span[1] - span[0], name) for name, spans in bodies.items() for span in spans
               if span[0] <= first and last <= span[1]]
    return min(holding)[1] if holding else None
