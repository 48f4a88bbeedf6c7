"""HypoFuzz replays a recorded choice sequence one provider draw per choice; forced
draws never reach the provider, so the replay slides out of step.

Hypothesis' stateful runner asks `draw_boolean(p=2**-16, forced=...)` before every step
and forces the answer before the first step and at the step limit. A forced draw is
recorded in the example's choice sequence (its `ChoiceNode` says `was_forced`) but
`ConjectureData` never calls the provider for it. HypoFuzz re-executes an input (its
stability check, its corpus and failure replay, inputs shared by other workers, its
mutators) by handing that sequence to `HypofuzzProvider`, which pops the next choice on
every provider call: after the first forced draw each pop takes the choice before the
one wanted, the types or bounds no longer match, fresh random choices are drawn, and the
re-execution runs another program. So no input was ever stable and the corpus stayed
empty (0 behaviours, 0 fingerprints).

`align_replayed_choices` makes the provider read the choice at the position of the draw
being made (the number of choices the test case has made so far, forced ones included),
which is how Hypothesis itself replays a sequence (`ConjectureData.for_choices`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis.control import currently_in_test_context

from invariants.engine_internals import HYPOFUZZ_PIN, private_attribute, private_imports
from invariants.engine_internals.hypothesis_private import choices_so_far

with private_imports("hypofuzz", HYPOFUZZ_PIN):
    from hypofuzz.provider import HypofuzzProvider, State

_MARK = "_harness_aligned"

# HypoFuzz's own `_pop_choice`, kept for the negative control in the tests.
UNALIGNED_POP_CHOICE: Callable[..., Any] = private_attribute(
    HypofuzzProvider, "_pop_choice", HYPOFUZZ_PIN)
# Set below; a state without it would take the attribute and replay out of step as before.
private_attribute(State, "choice_index", HYPOFUZZ_PIN)


def aligned_pop_choice(self: Any, choice_type: str, constraints: Any) -> Any:
    state = private_attribute(self, "_state", HYPOFUZZ_PIN)
    if state is not None and currently_in_test_context():
        # Draws made so far, forced ones included: the index of this draw's choice.
        state.choice_index = choices_so_far()
    return UNALIGNED_POP_CHOICE(self, choice_type, constraints)


def align_replayed_choices() -> None:
    """Install `aligned_pop_choice` on HypoFuzz's provider (once; idempotent)."""
    if getattr(HypofuzzProvider, _MARK, False):
        return
    setattr(HypofuzzProvider, "_pop_choice", aligned_pop_choice)  # noqa: B010
    setattr(HypofuzzProvider, _MARK, True)
