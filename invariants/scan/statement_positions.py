"""Positions of module- and class-level statements from CPython's parser.

Most reported nodes (every MESH005 finding) are statements of module and class bodies.
`ast.parse` places them at a fraction of the cost of libcst code generation up to the
last of them; the two trees are walked side by side, statement for statement. Anything
that does not line up is left to `positions.locate`. Nothing is compiled or run.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Sequence

import libcst as cst

from invariants.scan.names import source_lines, suite_body
from invariants.scan.positions import Span

_PAIRS: dict[type[cst.CSTNode], type[ast.AST]] = {
    cst.Assign: ast.Assign,
    cst.AnnAssign: ast.AnnAssign,
    cst.AugAssign: ast.AugAssign,
    cst.Expr: ast.Expr,
    cst.Import: ast.Import,
    cst.ImportFrom: ast.ImportFrom,
    cst.ClassDef: ast.ClassDef,
    cst.FunctionDef: ast.FunctionDef,
    cst.If: ast.If,
    cst.Try: ast.Try,
    cst.With: ast.With,
    cst.For: ast.For,
    cst.While: ast.While,
}


class _Mismatch(Exception):
    pass


def _pairs(
    body: Sequence[cst.BaseStatement], nodes: Sequence[ast.stmt]
) -> Iterator[tuple[cst.CSTNode, ast.stmt]]:
    """(libcst statement, ast statement) for a body and the if/try/with/class bodies in it."""
    flat: list[cst.CSTNode] = []
    for statement in body:
        if isinstance(statement, cst.SimpleStatementLine):
            flat.extend(statement.body)
        else:
            flat.append(statement)
    if len(flat) != len(nodes):
        raise _Mismatch
    for mine, theirs in zip(flat, nodes, strict=True):
        expected = _PAIRS.get(type(mine))
        if expected is not None and not isinstance(theirs, expected):
            raise _Mismatch
        yield mine, theirs
        yield from _children(mine, theirs)


def _children(mine: cst.CSTNode, theirs: ast.stmt) -> Iterator[tuple[cst.CSTNode, ast.stmt]]:
    if isinstance(mine, cst.ClassDef) and isinstance(theirs, ast.ClassDef):
        yield from _pairs(suite_body(mine.body), theirs.body)
    elif isinstance(mine, cst.If) and isinstance(theirs, ast.If):
        yield from _pairs(suite_body(mine.body), theirs.body)
        if isinstance(mine.orelse, cst.If):
            yield from _pairs([mine.orelse], theirs.orelse)
        elif mine.orelse is not None:
            yield from _pairs(suite_body(mine.orelse.body), theirs.orelse)
    elif isinstance(mine, cst.Try) and isinstance(theirs, ast.Try):
        yield from _pairs(suite_body(mine.body), theirs.body)
        if len(mine.handlers) != len(theirs.handlers):
            raise _Mismatch
        for handler, their_handler in zip(mine.handlers, theirs.handlers, strict=True):
            yield from _pairs(suite_body(handler.body), their_handler.body)
        if mine.orelse is not None:
            yield from _pairs(suite_body(mine.orelse.body), theirs.orelse)
        if mine.finalbody is not None:
            yield from _pairs(suite_body(mine.finalbody.body), theirs.finalbody)
    elif isinstance(mine, cst.With) and isinstance(theirs, ast.With):
        yield from _pairs(suite_body(mine.body), theirs.body)


def statement_spans(module: cst.Module, text: str, nodes: Iterable[cst.CSTNode]) -> dict[int, Span]:
    """Spans (keyed by `id`) of the wanted nodes that are module/class-level statements."""
    wanted = {id(node) for node in nodes}
    if not wanted:
        return {}
    try:
        tree = ast.parse(text)
        pairs = {id(mine): theirs for mine, theirs in _pairs(module.body, tree.body)}
    except (SyntaxError, ValueError, RecursionError, MemoryError, _Mismatch):
        return {}
    found = [(key, pairs[key]) for key in wanted if key in pairs]
    if not found:
        return {}
    lines = source_lines(text)
    spans: dict[int, Span] = {}
    for key, node in found:
        end_line = node.end_lineno or node.lineno
        spans[key] = Span(
            node.lineno,
            _column(lines, node.lineno, node.col_offset),
            end_line,
            _column(lines, end_line, node.end_col_offset or 0),
        )
    return spans


def _column(lines: list[str], line: int, byte_offset: int) -> int:
    """ast counts columns in UTF-8 bytes; findings count characters, 1-based."""
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    return len(text.encode()[:byte_offset].decode(errors="ignore")) + 1
