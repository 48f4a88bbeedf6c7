"""Dotted names of expressions, import aliases, and how configured names match them."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

import libcst as cst

_NEWLINE = re.compile(r"\r\n?|\n")


def source_lines(text: str) -> list[str]:
    """Lines as Python numbers them: `str.splitlines` also splits at form feeds and other
    separators, which would shift every later line number."""
    return _NEWLINE.split(text)


def dotted_name(node: cst.BaseExpression) -> str | None:
    """`a.b.c` for a Name/Attribute chain, else None (calls, subscripts, literals...)."""
    parts: list[str] = []
    current: cst.BaseExpression = node
    while isinstance(current, cst.Attribute):
        parts.append(current.attr.value)
        current = current.value
    if not isinstance(current, cst.Name):
        return None
    parts.append(current.value)
    return ".".join(reversed(parts))


def last_part(dotted: str) -> str:
    return dotted.rpartition(".")[2]


def _module_path(node: cst.BaseExpression) -> str:
    return dotted_name(node) or ""


def top_level_statements(body: Sequence[cst.BaseStatement]) -> Iterator[cst.BaseStatement]:
    """Statements at module level, including those nested in if/try/with blocks (not defs)."""
    for statement in body:
        yield statement
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            continue
        for block in child_blocks(statement):
            yield from top_level_statements(block)


def suite_body(suite: cst.BaseSuite) -> Sequence[cst.BaseStatement]:
    """A suite's statements; a one-line suite (`if x: y = 1`) becomes one statement line."""
    if isinstance(suite, cst.IndentedBlock):
        return suite.body
    assert isinstance(suite, cst.SimpleStatementSuite)
    return [cst.SimpleStatementLine(body=suite.body)]


def child_blocks(statement: cst.BaseStatement) -> Iterator[Sequence[cst.BaseStatement]]:
    """The statement lists directly inside a compound statement (an elif is a block of one)."""
    if isinstance(statement, cst.If):
        yield suite_body(statement.body)
        if isinstance(statement.orelse, cst.If):
            yield [statement.orelse]
        elif statement.orelse is not None:
            yield suite_body(statement.orelse.body)
    elif isinstance(statement, (cst.For, cst.While)):
        yield suite_body(statement.body)
        if statement.orelse is not None:
            yield suite_body(statement.orelse.body)
    elif isinstance(statement, (cst.Try, cst.TryStar)):
        yield suite_body(statement.body)
        for handler in statement.handlers:
            yield suite_body(handler.body)
        if statement.orelse is not None:
            yield suite_body(statement.orelse.body)
        if statement.finalbody is not None:
            yield suite_body(statement.finalbody.body)
    elif isinstance(statement, (cst.With, cst.FunctionDef, cst.ClassDef)):
        yield suite_body(statement.body)
    elif isinstance(statement, cst.Match):
        for case in statement.cases:
            yield suite_body(case.body)


def import_aliases(module: cst.Module) -> dict[str, str]:
    """Local name -> full dotted name, from the module's own imports (never resolved)."""
    aliases: dict[str, str] = {}
    for statement in top_level_statements(module.body):
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    full = _module_path(alias.name)
                    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                        aliases[alias.asname.name.value] = full
            elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                base = _module_path(small.module) if small.module is not None else ""
                for alias in small.names:
                    imported = _module_path(alias.name)
                    local = imported
                    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                        local = alias.asname.name.value
                    aliases[local] = f"{base}.{imported}" if base else imported
    return aliases


def canonical(dotted: str, aliases: dict[str, str]) -> str:
    """Expand the first component through the import aliases."""
    head, dot, rest = dotted.partition(".")
    full = aliases.get(head)
    if full is None:
        return dotted
    return f"{full}{dot}{rest}"


def matches_last(dotted: str, names: Sequence[str]) -> bool:
    """Method-style match: the last component is one of the names' last components."""
    return last_part(dotted) in {last_part(name) for name in names}


def matches_suffix(dotted: str, names: Sequence[str]) -> bool:
    """`name` matches `name` itself or any `x.name` (whole components only)."""
    return any(dotted == name or dotted.endswith("." + name) for name in names)
