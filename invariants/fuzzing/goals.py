"""The behaviours a fuzzing session should reach: the `event()` labels the machines emit.

`invariants.dynamic.driver` reports a behaviour with `hypothesis.event(label)` once per example
that reached it. A session counts, per goal, the examples that reached it; a goal with a
count of zero was never exercised and the summary says so.
"""

from __future__ import annotations

from collections.abc import Iterable

GOALS: tuple[str, ...] = (
    "breaker tripped",
    "aggregate shed",
    "post rejected",
    "failure answered",
    "answer suppressed",
    "dispatch refused",
    "gated by teardown",
    "attempt timed out",
    "delivery retry budget spent",
    "subscription answered",
    "subscription terminated",
    "routing pool saturated",
    "graceful stop",
    "non-graceful stop",
    "stop hold expired",
    "stop completed",
)

# Emitted at teardown: how a run ended rather than a behaviour to reach.
TEARDOWN_LABELS: tuple[str, ...] = ("quiescent at teardown", "not quiescent within the bound")


def goal_labels(features: Iterable[str]) -> list[str]:
    """The goals among an example's observed features (Hypothesis' own labels ignored)."""
    wanted = set(GOALS)
    return [label for label in features if label in wanted]


def never_reached(counts: dict[str, int]) -> list[str]:
    return [goal for goal in GOALS if counts.get(goal, 0) == 0]
