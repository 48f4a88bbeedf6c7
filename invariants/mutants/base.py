"""What a pre-fix mutant is, and how its codemod is applied to one file of the reference mesh.

A mutant is a named libcst codemod of one reference source file. It counts the sites it
rewrites; when the count differs from the expected one the code it targets has changed,
and applying it raises `MutantNotApplicable` instead of silently yielding the unmutated
mesh.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst
from libcst.codemod import CodemodContext, VisitorBasedCodemodCommand


class MutantNotApplicable(Exception):
    """The codemod's target was not found exactly as often as expected."""


class MutationCodemod(VisitorBasedCodemodCommand):
    """A codemod that rewrites the site(s) of one mutant and counts them."""

    DESCRIPTION = "a pre-fix mutation of the reference mesh"

    def __init__(self, context: CodemodContext) -> None:
        super().__init__(context)
        self.hits = 0

    def hit(self) -> None:
        self.hits += 1


@dataclass(frozen=True)
class Mutant:
    """One pre-fix mutant: a shape the seed write-ups describe, or the negative control of
    an obligation."""

    id: str  # "M1"
    slug: str  # "payload-type-guard"
    shape: str  # the pre-fix shape it produces, in words
    path: str  # the mutated file, relative to the reference package
    site: str  # the mutated function, qualified ("Router.answer_failure")
    target: str  # the code it rewrites, as written in the reference
    kills: tuple[str, ...]  # the checks that must catch it
    codemod: type[MutationCodemod]
    expected_hits: int = 1
    # What the rewrite shows, for its tests: code found on a line it adds (the pre-fix
    # shape) and code found on a line it removes ("" for nothing: a mutant that only
    # removes, or only adds, or rewrites its target in place).
    writes: str = ""
    removes: str = ""
    # The seed scenarios (`invariants.dynamic.seed_programs`) of its dynamic kill that
    # must catch it, run as fixed step programs.
    seeds: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return f"{self.id} {self.slug}"

    def apply(self, source: str, *, filename: str | None = None) -> str:
        """The mutated source; `MutantNotApplicable` when the target is not found exactly
        `expected_hits` times (or the rewrite changes nothing)."""
        where = filename or self.path
        try:
            module = cst.parse_module(source)
        except cst.ParserSyntaxError as exc:
            raise MutantNotApplicable(
                f"mutant {self.name}: cannot parse {where}: {str(exc).splitlines()[0]}"
            ) from None
        codemod = self.codemod(CodemodContext(filename=where))
        mutated = codemod.transform_module(module)
        if codemod.hits != self.expected_hits:
            raise MutantNotApplicable(
                f"mutant {self.name}: target `{self.target}` in {self.site} found "
                f"{codemod.hits} time(s) in {where}, expected {self.expected_hits}; "
                "the reference code changed, update the codemod"
            )
        if mutated.code == source:
            raise MutantNotApplicable(f"mutant {self.name}: the codemod left {where} unchanged")
        return mutated.code
