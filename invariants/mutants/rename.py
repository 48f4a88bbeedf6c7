"""Rewrite a package's absolute self-imports to another package name, with libcst.

The mutated copy of the reference mesh imports itself as `reference_impl.x`; renamed to an
isolated package (`_mesh_mutant_m2_…`) it can be imported next to the real one without
touching it. Relative imports already stay inside the package and are left alone.
"""

from __future__ import annotations

import functools

import libcst as cst
import libcst.matchers as m
from libcst.helpers import get_full_name_for_node


class UnsupportedImport(Exception):
    """`import pkg.x` without `as` binds the old top-level name: it cannot be renamed."""


def _dotted(name: str) -> cst.Attribute | cst.Name:
    expression = cst.parse_expression(name)
    assert isinstance(expression, cst.Attribute | cst.Name)
    return expression


# Nodes that can hold an import statement: only these are descended into, which keeps the
# pass cheap (expressions, where no import can be, are never walked).
_HOLDERS = (
    cst.Module, cst.BaseCompoundStatement, cst.BaseSuite, cst.Else, cst.ExceptHandler,
    cst.ExceptStarHandler, cst.Finally, cst.MatchCase,
)


class PackageRename(cst.CSTTransformer):
    def __init__(self, old: str, new: str) -> None:
        super().__init__()
        self.old = old
        self.new = new
        self.renamed = 0

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.SimpleStatementLine):
            return any(isinstance(s, cst.Import | cst.ImportFrom) for s in node.body)
        return isinstance(node, _HOLDERS)

    def _renamed(self, node: cst.BaseExpression) -> str | None:
        name = get_full_name_for_node(node)
        if name is None or not (name == self.old or name.startswith(self.old + ".")):
            return None
        self.renamed += 1
        return self.new + name[len(self.old):]

    def leave_ImportFrom(
        self, original_node: cst.ImportFrom, updated_node: cst.ImportFrom
    ) -> cst.ImportFrom:
        if not m.matches(updated_node, m.ImportFrom(relative=())):
            return updated_node  # a relative import stays inside the package
        module = updated_node.module
        new_name = self._renamed(module) if module is not None else None
        if new_name is None:
            return updated_node
        return updated_node.with_changes(module=_dotted(new_name))

    def leave_Import(self, original_node: cst.Import, updated_node: cst.Import) -> cst.Import:
        aliases = []
        for alias in updated_node.names:
            new_name = self._renamed(alias.name)
            if new_name is None:
                aliases.append(alias)
            elif alias.asname is None:
                raise UnsupportedImport(
                    f"`import {get_full_name_for_node(alias.name)}` binds the package name "
                    "itself and cannot be renamed; use `from ... import` or `import ... as`"
                )
            else:
                aliases.append(alias.with_changes(name=_dotted(new_name)))
        return updated_node.with_changes(names=aliases)


# Renamed once to this name, then to each build's own by plain replacement: every mutant
# copies the same unmutated modules, and parsing them is most of a build's cost.
PLACEHOLDER = "_mesh_package_placeholder_0f3c9a"


def rename_package(source: str, old: str, new: str) -> str:
    """`source` with every absolute import of `old` (or its submodules) importing `new`."""
    form = placeholder_form(source, old)
    if form is None:
        return cst.parse_module(source).visit(PackageRename(old, new)).code
    return form.replace(PLACEHOLDER, new)


def placeholder_form(source: str, old: str) -> str | None:
    """`source` with every absolute import of `old` importing `PLACEHOLDER`, which appears
    nowhere else: replacing it by a name renames the package to that name. None for a
    source that holds the placeholder already (never real code)."""
    return None if PLACEHOLDER in source else _renamed_to_placeholder(source, old)


@functools.lru_cache(maxsize=512)
def _renamed_to_placeholder(source: str, old: str) -> str:
    return cst.parse_module(source).visit(PackageRename(old, PLACEHOLDER)).code
