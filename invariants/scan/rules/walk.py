"""Statement-level walks: far cheaper than visiting every expression node."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import libcst as cst

from invariants.scan.names import child_blocks, suite_body


def all_statements(
    body: Sequence[cst.BaseStatement], scope: tuple[str, ...] = ()
) -> Iterator[tuple[cst.BaseStatement, str]]:
    """Every statement in the file, with the qualified name of its enclosing defs/classes."""
    for statement in body:
        yield statement, ".".join(scope)
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            yield from all_statements(suite_body(statement.body), (*scope, statement.name.value))
            continue
        for block in child_blocks(statement):
            yield from all_statements(block, scope)


def shared_statements(
    body: Sequence[cst.BaseStatement], scope: tuple[str, ...] = ()
) -> Iterator[tuple[cst.BaseStatement, str]]:
    """Statements of module and class bodies (and their if/try/with blocks): the places
    whose bindings outlive a call. Function bodies are not entered."""
    for statement in body:
        if isinstance(statement, cst.FunctionDef):
            continue
        if isinstance(statement, cst.ClassDef):
            yield from shared_statements(suite_body(statement.body), (*scope, statement.name.value))
            continue
        yield statement, ".".join(scope)
        for block in child_blocks(statement):
            yield from shared_statements(block, scope)
