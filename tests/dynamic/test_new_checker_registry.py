"""A new invariant checker is its module plus one registry line: registered, it is
accepted as an id everywhere ids are normalised, driven by a machine (every rule family,
for want of a plan of its own) and its verdict decides the run."""

from __future__ import annotations

import pytest

from invariants.checks import CHECKS, Monitor, check_ids
from invariants.dynamic.plans import DEFAULT_PLAN, FAMILIES, plan_of
from invariants.dynamic.runner import run_invariant
from invariants.trace import EventKind, TraceEvent
from reference_impl.adapter import make_adapter


class NoFailureAnswered(Monitor):
    """A throwaway invariant (false of the reference): no delivery is ever answered with a
    DeliveryFailure."""

    check_id = "INV90"
    title = "no failure is ever answered"

    def observe(self, event: TraceEvent) -> None:
        if event.kind is EventKind.FAILURE_EMITTED:
            self.flag(f"delivery {event.answers} was answered with a failure", event)


class NothingToSay(NoFailureAnswered):
    """The control: the same checker that never flags."""

    check_id = "INV91"

    def observe(self, event: TraceEvent) -> None:
        return None


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> None:
    for checker in (NoFailureAnswered, NothingToSay):
        monkeypatch.setitem(CHECKS, checker.check_id, checker)


@pytest.mark.usefixtures("registered")
def test_a_registered_checker_is_a_known_id_with_the_default_plan() -> None:
    assert check_ids(["inv90"], "--invariants") == ("INV90",)
    assert plan_of("INV90") is DEFAULT_PLAN
    assert DEFAULT_PLAN.core | DEFAULT_PLAN.extra == set(FAMILIES)


@pytest.mark.usefixtures("registered")
@pytest.mark.slow
def test_its_verdict_decides_the_run() -> None:
    # Deliveries to missing targets are answered with failures: the checker flags.
    flagged = run_invariant("INV90", make_adapter, "ci")
    assert flagged.verdict == "violation", flagged.failure_text
    assert {v.check_id for v in flagged.violations} == {"INV90"}
    assert flagged.shrunk_steps is not None
    quiet = run_invariant("INV91", make_adapter, "ci")
    assert quiet.verdict == "pass", quiet.failure_text


def test_unregistered_it_is_unknown() -> None:
    with pytest.raises(ValueError, match="unknown invariant 'INV90'"):
        check_ids(["INV90"], "--invariants")
