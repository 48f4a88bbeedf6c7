"""Resolve call-target descriptors (`targets`) against the definitions of the whole tree.

Built only when a scan has an unguarded emit site, and asked only about the calls whose
last name is that of a function the call-graph pass is looking at: most scans never build
it, and no scan resolves every call.

Unknowns widen, never narrow: a name that cannot be pinned to one definition reaches every
function (or method) with its last name, so a call the resolver does not understand can only
add callers to check, never hide one.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING

from invariants.scan.model import FileReport
from invariants.scan.rules.mesh001.targets import module_of

if TYPE_CHECKING:  # networkx costs 0.15 s to import: only scans that build a graph pay
    pass


def _last(name: str) -> str:
    return name.rpartition(".")[2]


class DefinitionIndex:
    def __init__(self, reports: Sequence[FileReport]) -> None:
        self.functions: set[str] = set()
        self.classes: set[str] = set()
        self.methods: set[str] = set()
        self._functions_named: dict[str, set[str]] = defaultdict(set)
        self._classes_named: dict[str, set[str]] = defaultdict(set)
        self._modules: dict[str, set[str]] = defaultdict(set)  # dotted suffix -> modules
        self._module_paths: set[str] = set()
        bases: list[tuple[str, str]] = []
        for report in reports:
            module = module_of(report.path)
            self._module_paths.add(module)
            parts = module.split(".")
            for start in range(len(parts)):  # `pkg.mod` also answers to `mod` (src layouts)
                self._modules[".".join(parts[start:])].add(module)
            kinds = {d.qualname: d.is_class for d in report.definitions}
            for definition in report.definitions:
                node = f"{module}:{definition.qualname}"
                last = _last(definition.qualname)
                if definition.is_class:
                    self.classes.add(node)
                    self._classes_named[last].add(node)
                    bases.extend((node, base) for base in definition.bases)
                    continue
                self.functions.add(node)
                self._functions_named[last].add(node)
                if kinds.get(definition.qualname.rpartition(".")[0], False):
                    self.methods.add(node)
        # Class hierarchy, base -> subclass.
        import networkx as nx

        self.hierarchy = nx.DiGraph()
        self.hierarchy.add_nodes_from(self.classes)
        for node, base in bases:
            for resolved in self._classes_of(base):
                if resolved != node:
                    self.hierarchy.add_edge(resolved, node)
        self._cache: dict[str, frozenset[str]] = {}

    # -- classes ----------------------------------------------------------------------------
    def _classes_of(self, descriptor: str) -> set[str]:
        kind, rest = descriptor[0], descriptor[1:]
        if kind == "!":
            return {rest} if rest in self.classes else set()
        if kind == "=":
            found, known_module = self._split(rest, self.classes)
            if found or not known_module:
                return found
        return set(self._classes_named.get(_last(rest), ()))  # `.X`, `*X`, or unknown `=`

    def _split(self, dotted: str, table: set[str]) -> tuple[set[str], bool]:
        """Definitions of `table` at `dotted` (a module path, then a qualname), and whether
        any prefix of `dotted` names a module of the tree at all."""
        parts = dotted.split(".")
        found: set[str] = set()
        known_module = False
        for cut in range(len(parts) - 1, 0, -1):
            modules = self._modules_at(parts[:cut])
            if not modules:
                continue
            known_module = True
            qualname = ".".join(parts[cut:])
            found |= {f"{m}:{qualname}" for m in modules if f"{m}:{qualname}" in table}
        return found, known_module

    def _modules_at(self, parts: list[str]) -> set[str]:
        """The tree's modules an import path may mean, whichever of the two is deeper: the
        tree's `src/pkg/impl.py` for `pkg.impl`, or `impl.py` scanned from inside `pkg`."""
        found = set(self._modules.get(".".join(parts), ()))
        for start in range(1, len(parts)):
            tail = ".".join(parts[start:])
            if tail in self._module_paths:
                found.add(tail)
        return found

    def _in_hierarchy(self, cls: str, name: str, *, subclasses: bool) -> set[str]:
        """Method `name` of `cls`, of its base classes, and (for a call on `self`, which
        may be an instance of a subclass) of its subclasses."""
        if cls not in self.hierarchy:
            return set()
        import networkx as nx

        related = {cls} | nx.ancestors(self.hierarchy, cls)
        if subclasses:
            related |= nx.descendants(self.hierarchy, cls)
        return {f"{c}.{name}" for c in related if f"{c}.{name}" in self.functions}

    # -- functions --------------------------------------------------------------------------
    def targets(self, descriptor: str) -> frozenset[str]:
        """Every function of the tree a call with this descriptor may reach."""
        cached = self._cache.get(descriptor)
        if cached is None:
            cached = frozenset(self._targets(descriptor))
            self._cache[descriptor] = cached
        return cached

    def _targets(self, descriptor: str) -> set[str]:
        kind, rest = descriptor[:1], descriptor[1:]
        name = _last(rest)
        if kind == "!":  # defined in the caller's file: exact, or a method of a class there
            if rest in self.functions:
                return {rest}
            owner = rest.rpartition(".")[0]
            if owner in self.classes:
                return self._in_hierarchy(owner, name, subclasses=False) or self._named(name)
            return set()  # a class instantiated, or an attribute of a module-level object
        if kind == "@":
            owner = rest.rpartition(".")[0]
            found = self._in_hierarchy(owner, name, subclasses=True)
            return found or self._methods_named(name)
        if kind == "=":
            found, known_module = self._split(rest, self.functions)
            for cls in self._split(rest.rpartition(".")[0], self.classes)[0]:
                found |= self._in_hierarchy(cls, name, subclasses=False)
            if found or not known_module:
                return found  # not a module of the tree: a call into a library
            return self._named(name)  # a re-export, or a name bound by assignment
        if kind == ".":
            return self._methods_named(name)
        return self._named(name)  # "*": a star import may bring any function

    def _named(self, name: str) -> set[str]:
        return set(self._functions_named.get(name, ()))

    def _methods_named(self, name: str) -> set[str]:
        return {f for f in self._functions_named.get(name, ()) if f in self.methods}
