"""What a pre-fix mutant is, and how it is applied to one file of the reference mesh.

A mutant rewrites one reference source file with libcst, inside one named function (its
site), and counts the places it rewrites; when the count differs from the expected one the
code it targets has changed, and applying it raises `MutantNotApplicable` instead of
silently yielding the unmutated mesh. It comes in two kinds: a `Patch`
(`invariants.mutants.patch`), one line or expression of the site replaced by another, and
a `Rewrite`, a codemod class of its own for what a patch cannot say.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import ClassVar, TypeVar

import libcst as cst
from libcst import MetadataWrapper
from libcst.codemod import CodemodContext, VisitorBasedCodemodCommand

_Node = TypeVar("_Node", bound=cst.CSTNode)


class MutantNotApplicable(Exception):
    """The codemod's target was not found exactly as often as expected."""


class MutationCodemod(VisitorBasedCodemodCommand):
    """A codemod that rewrites the site(s) of one mutant and counts them.

    Given its mutant's site (`walk_only`), it walks only the path to that function: the
    module, the enclosing class and the function itself. Matching every node of a whole
    module was most of a build's cost, and a rewrite outside the site is a bug anyway."""

    DESCRIPTION = "a pre-fix mutation of the reference mesh"

    def __init__(self, context: CodemodContext) -> None:
        super().__init__(context)
        self.hits = 0
        self._path: tuple[str, ...] = ()  # the site's names, outermost first; () walks all
        self._entered: list[cst.ClassDef | cst.FunctionDef] = []  # on the path, so far

    def hit(self) -> None:
        self.hits += 1

    def walk_only(self, site: str) -> None:
        """Walk only `site` ("Class.method" or "function") and the path to it."""
        self._path = tuple(site.split("."))

    def in_site(self) -> bool:
        """Whether the walk is inside the site now (anywhere, with no site)."""
        return not self._path or len(self._entered) == len(self._path)

    def on_visit(self, node: cst.CSTNode) -> bool:
        descend = super().on_visit(node)  # the matchers see every node that is visited
        if self.in_site():
            return descend  # no site, or inside it: everything below
        if isinstance(node, cst.Module | cst.BaseSuite):
            return descend  # reached only on the path: the module, or an entered def's body
        if isinstance(node, cst.ClassDef | cst.FunctionDef) and (
            node.name.value == self._path[len(self._entered)]
        ):
            self._entered.append(node)
            return descend
        return False

    def on_leave(
        self, original_node: _Node, updated_node: _Node
    ) -> _Node | cst.RemovalSentinel:
        if self._entered and original_node is self._entered[-1]:
            self._entered.pop()
        return super().on_leave(original_node, updated_node)

    @contextmanager
    def _handle_metadata_reference(self, module: cst.Module) -> Iterator[cst.Module]:
        # libcst's own (a private method: the pin in pyproject.toml covers it), less the
        # wrapper's deep copy of the tree: a parsed or transformed tree has no shared
        # nodes, and the copy was about a tenth of a build. No repo metadata is used here.
        wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
        old = self.context
        with self.resolve(wrapper):
            self.context = replace(old, wrapper=wrapper)
            try:
                yield wrapper.module
            finally:
                self.context = replace(self.context, wrapper=old.wrapper)


@dataclass(frozen=True, kw_only=True)
class Mutant:
    """One pre-fix mutant: a shape the seed write-ups describe, or the negative control of
    an obligation. What every kind has; a kind says how it rewrites (`codemod_for`)."""

    id: str  # "M1"
    slug: str  # "payload-type-guard"
    shape: str  # the pre-fix shape it produces, in words
    path: str  # the mutated file, relative to the reference package
    site: str  # the mutated function, qualified ("Router.answer_failure")
    target: str  # the code it rewrites, as written in the reference
    kills: tuple[str, ...]  # the checks that must catch it
    expected_hits: int = 1
    # What the rewrite shows, for its tests: code found on a line it adds (the pre-fix
    # shape) and code found on a line it removes ("" for nothing: a mutant that only
    # removes, or only adds, or rewrites its target in place).
    writes: str = ""
    removes: str = ""
    # The seed scenarios (`invariants.dynamic.seed_programs`) of its dynamic kill that
    # must catch it, run as fixed step programs.
    seeds: tuple[str, ...] = ()
    # Why the state machine's drawn rules alone do not reach it ("" when they do): a shape
    # too costly to draw, which only its seed programs run. The tests hold it to that.
    drawn_blind: str = ""

    # What to mend when its target is not found as often as expected.
    MEND: ClassVar[str] = "the mutant"

    @property
    def name(self) -> str:
        return f"{self.id} {self.slug}"

    def codemod_for(self, filename: str) -> MutationCodemod:
        """A fresh codemod that makes this mutant's rewrite (walking the whole module until
        told its site)."""
        raise NotImplementedError(f"mutant {self.name}: a Mutant kind says how it rewrites")

    def apply(self, source: str, *, filename: str | None = None) -> str:
        """The mutated source; `MutantNotApplicable` when the target is not found exactly
        `expected_hits` times (or the rewrite changes nothing)."""
        where = filename or self.path
        try:
            module = _parsed(source)
        except cst.ParserSyntaxError as exc:
            raise MutantNotApplicable(
                f"mutant {self.name}: cannot parse {where}: {str(exc).splitlines()[0]}"
            ) from None
        codemod = self.codemod_for(where)
        codemod.walk_only(self.site)
        mutated = codemod.transform_module(module)
        if codemod.hits != self.expected_hits:
            raise MutantNotApplicable(
                f"mutant {self.name}: target `{self.target}` in {self.site} found "
                f"{codemod.hits} time(s) in {where}, expected {self.expected_hits}; "
                f"the reference code changed, update {self.MEND}"
            )
        code = mutated.code
        if code == source:
            raise MutantNotApplicable(f"mutant {self.name}: the codemod left {where} unchanged")
        return code


@dataclass(frozen=True, kw_only=True)
class Rewrite(Mutant):
    """A mutant whose rewrite is a codemod class of its own: an insertion, a change of
    more than one place, or one a line's text cannot name."""

    codemod: type[MutationCodemod]

    MEND: ClassVar[str] = "the codemod"

    def codemod_for(self, filename: str) -> MutationCodemod:
        return self.codemod(CodemodContext(filename=filename))


@functools.lru_cache(maxsize=64)
def _parsed(source: str) -> cst.Module:
    """A file's tree, parsed once per process: mutants of one file share it (libcst trees
    are immutable, a codemod builds a new one)."""
    return cst.parse_module(source)
