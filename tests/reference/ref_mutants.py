"""The reference tests' negative controls: modules of a registered mutant's build.

A control is the current reference with the mutant's codemod applied (imported in
isolation), never a monkeypatched copy of the code it breaks, so it cannot drift from it.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from invariants.mutants.build import build_mutant
from invariants.mutants.registry import find_mutant


def mutant_module(mutant_id: str, module: str) -> ModuleType:
    """`module` ("adapter", "scenarios", "breaker", ...) of the mutant's isolated package."""
    build = build_mutant(find_mutant(mutant_id))
    return importlib.import_module(f"{build.package}.{module}")
