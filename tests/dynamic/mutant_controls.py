"""The dynamic checks' negative controls, taken from the mutant registry.

Every registered mutant is a control of each invariant it must break (its dynamic kills),
built by its codemod from the current reference, so a control can never drift from the
code it breaks: a refactor the codemod no longer fits fails loudly instead.
"""

from __future__ import annotations

from invariants.adapter import AdapterFactory
from invariants.checks import CHECK_IDS
from invariants.mutants.build import build_mutant
from invariants.mutants.registry import MUTANTS, find_mutant

# (check id, mutant id): each dynamic kill the registry lists, in registry order.
CONTROLS: tuple[tuple[str, str], ...] = tuple(
    (check, mutant.id) for mutant in MUTANTS for check in mutant.kills if check in CHECK_IDS
)

# Per check, the first registered mutant that must break it.
FIRST_CONTROL: dict[str, str] = {}
for _check, _mutant in CONTROLS:
    FIRST_CONTROL.setdefault(_check, _mutant)


def mutant_factory(mutant_id: str) -> AdapterFactory:
    """The adapter factory of a registered mutant (built once per process)."""
    return build_mutant(find_mutant(mutant_id)).factory


def control_id(control: tuple[str, str]) -> str:
    check_id, mutant_id = control
    return f"{check_id}-{find_mutant(mutant_id).name.replace(' ', '-')}"
