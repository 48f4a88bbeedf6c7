"""Fault honouring is judged over the whole run: a mesh that honours a kind of fault in one
example and ignores it in another violates INV4, though every example alone is consistent.
The negative control is the reference mesh with every other mesh ignoring TIMEOUT_NEXT."""

from __future__ import annotations

import itertools

from invariants.adapter import Chooser, Fault, FaultKind
from invariants.checks import CHECKS
from invariants.checks.inv4_no_resend_after_timeout import HONOURED, IGNORED
from invariants.dynamic.runner import run_invariant
from reference_impl.adapter import ReferenceAdapter, make_adapter

_made = itertools.count()


class EveryOtherMeshIgnoresTimeouts(ReferenceAdapter):
    """Each mesh honours TIMEOUT_NEXT always or never: every other one never does."""

    def __init__(self, chooser: Chooser) -> None:
        super().__init__(chooser)
        self.ignores_timeouts = next(_made) % 2 == 1

    def inject(self, fault: Fault) -> None:
        if self.ignores_timeouts and fault.kind is FaultKind.TIMEOUT_NEXT:
            self.mesh.note_fault(fault.kind.value, fault.target)  # traced, never armed
            return
        super().inject(fault)


def test_a_kind_honoured_in_one_example_and_ignored_in_another_is_a_violation() -> None:
    outcome = run_invariant("INV4", EveryOtherMeshIgnoresTimeouts)
    assert outcome.verdict == "violation", outcome.failure_text
    text = outcome.failure_text or ""
    assert text.startswith("INV4: timeout_next faults honoured in ")
    assert "across the run" in text
    # The evidence behind it: both counts, in the failure text.
    assert outcome.evidence[HONOURED[FaultKind.TIMEOUT_NEXT]] > 0
    assert f"{IGNORED[FaultKind.TIMEOUT_NEXT]}" in text


def test_the_reference_mesh_honours_every_kind_every_time() -> None:
    outcome = run_invariant("INV4", make_adapter)
    assert outcome.verdict == "pass", outcome.failure_text
    assert outcome.context.get(IGNORED[FaultKind.TIMEOUT_NEXT], 0) == 0


def test_the_rule_reads_only_the_summed_counts() -> None:
    across = CHECKS["INV4"].across_examples
    honoured, ignored = HONOURED[FaultKind.REJECT_NEXT], IGNORED[FaultKind.REJECT_NEXT]
    assert across({honoured: 3}, {ignored: 1}) == [
        "reject_next faults honoured in 3 case(s) and ignored in 1 across the run: a mesh "
        "that honours a kind of fault must honour it every time"]
    assert across({honoured: 3}, {}) == []  # honoured every time
    assert across({honoured: 0}, {ignored: 4}) == []  # never modelled: not exercised instead
