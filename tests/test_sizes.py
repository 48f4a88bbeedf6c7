"""Small pieces: no class over `MAX_CLASS_LINES` and no function over `MAX_FUNCTION_LINES`
in the library (`harness/`, `invariants/`, `reference_impl/`; benchmarks and tests aside),
counted from the `class`/`def` line to the node's last line, docstring included. A piece
that grows past them is split by what it does, not squeezed."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIBRARY = ("harness", "invariants", "reference_impl")
MAX_CLASS_LINES = 250
MAX_FUNCTION_LINES = 60


def too_long(source: str, where: str) -> list[str]:
    """`where:line name (n lines)` for each class or function over its limit."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef):
            limit = MAX_CLASS_LINES
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            limit = MAX_FUNCTION_LINES
        else:
            continue
        lines = (node.end_lineno or node.lineno) - node.lineno + 1
        if lines > limit:
            found.append(f"{where}:{node.lineno} {node.name} ({lines} lines)")
    return found


def test_no_class_or_function_in_the_library_is_over_its_limit() -> None:
    found = [
        problem
        for package in LIBRARY
        for path in sorted((ROOT / package).rglob("*.py"))
        for problem in too_long(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    ]
    assert found == []


def test_control_a_long_function_and_a_long_class_are_named() -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
    methods = "".join(f"    def m{i}(self) -> None:\n        pass\n\n" for i in range(90))
    source = f"def long() -> None:\n{body}\n\nclass Big:\n{methods}"
    assert too_long(source, "x.py") == [
        f"x.py:1 long ({MAX_FUNCTION_LINES + 1} lines)", "x.py:64 Big (270 lines)"
    ]
    assert too_long("def short() -> None:\n    pass\n", "x.py") == []
