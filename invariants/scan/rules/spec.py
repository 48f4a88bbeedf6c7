"""The shape every rule module fills in: an id, a cheap text prefilter, a check, examples."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from invariants.scan.context import FileContext

# An invalid example: its source and the lines the rule must report, in order.
InvalidExample = tuple[str, tuple[int, ...]]


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    # From the text alone (no tree walk): can this rule find anything in the file?
    applies: Callable[[FileContext], bool]
    check: Callable[[FileContext], None]
    valid: tuple[str, ...]
    invalid: tuple[InvalidExample, ...]
    examples_are_tests: bool = False  # analyse the examples as test files
