"""List the longest functions and classes of the library, a guide to where a split may help.

    python benchmarks/sizes_report.py [--top N] [--json FILE] [PACKAGE ...]

Reads every `.py` file under the packages (default: `harness`, `invariants`,
`reference_impl`; benchmarks and tests aside) with `ast` and prints the `--top` (default
15) longest functions and the longest classes, each as `lines  path:line  name`. A piece's
length runs from its `class`/`def` line to its last line, docstring included (decorators
not counted). A nested function or class is listed on its own and also counts in the piece
around it.

Information only: there is no limit to meet. A long piece is split where it does two jobs,
never reflowed or moved to a new module to make a number smaller. Exit status 0, or 2 on a
usage error (a package that is not a directory).
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = ("harness", "invariants", "reference_impl")


@dataclass(frozen=True)
class Piece:
    """One function or class: its kind, where it starts and how many lines it spans."""

    kind: str  # "function" or "class"
    path: str  # relative to the root
    line: int
    name: str
    lines: int

    def row(self) -> str:
        return f"{self.lines:5d}  {self.path}:{self.line}  {self.name}"


def pieces(source: str, path: str) -> list[Piece]:
    """Every function and class in `source`, named `Outer.inner` where nested."""
    found: list[Piece] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                kind = "class" if isinstance(child, ast.ClassDef) else "function"
                name = f"{prefix}{child.name}"
                length = (child.end_lineno or child.lineno) - child.lineno + 1
                found.append(Piece(kind, path, child.lineno, name, length))
                visit(child, f"{name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(source, filename=path), "")
    return found


def library_pieces(root: Path, packages: Iterable[str]) -> list[Piece]:
    return [
        piece
        for package in packages
        for file in sorted((root / package).rglob("*.py"))
        for piece in pieces(file.read_text(encoding="utf-8"), file.relative_to(root).as_posix())
    ]


def longest(found: Sequence[Piece], kind: str, top: int) -> list[Piece]:
    """The `top` longest pieces of `kind`, longest first (then by place, for a stable order)."""
    ranked = sorted((p for p in found if p.kind == kind), key=lambda p: (-p.lines, p.path, p.line))
    return ranked[:top]


def report(found: Sequence[Piece], top: int) -> str:
    out = []
    for kind, title in (("function", "functions and methods"), ("class", "classes")):
        out.append(f"The {top} longest {title} (lines, where, name):")
        out.extend(piece.row() for piece in longest(found, kind, top))
        out.append("")
    files = len({piece.path for piece in found})
    out.append(f"In all: {len(found)} functions and classes in {files} files.")
    return "\n".join(out)


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("packages", nargs="*", default=list(LIBRARY),
                        help="directories under the repository root (default: the library)")
    parser.add_argument("--top", type=int, default=15, help="how many of each kind to list")
    parser.add_argument("--json", type=Path, help="also write every piece's figures here")
    args = parser.parse_args(argv)
    missing = [p for p in args.packages if not (ROOT / p).is_dir()]
    if missing:
        parser.error(f"not a directory under {ROOT}: {', '.join(missing)}")
    if args.top < 1:
        parser.error(f"--top must be 1 or more, got {args.top}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    found = library_pieces(ROOT, args.packages)
    print(report(found, args.top))
    if args.json is not None:
        args.json.write_text(json.dumps([asdict(p) for p in found], indent=1) + "\n",
                             encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
