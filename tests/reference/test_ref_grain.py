"""Grain delivery and its retry ladder (seed 000): a timed-out delivery is sent exactly once,
a rejected one is re-sent until the budget is spent (7 calls, 9.75 s of delay)."""

from __future__ import annotations

from typing import Any

import pytest
from ref_mutants import mutant_module

from invariants.adapter import Fault, FaultKind, MessageSpec, Route
from invariants.trace import EventKind
from reference_impl.adapter import ReferenceAdapter
from reference_impl.constants import retry_delay_ms


def _run(fault: FaultKind, count: int, *, mesh: Any = ReferenceAdapter,
         **options: int) -> tuple[ReferenceAdapter, str]:
    """One grain delivery to a callee armed with `count` faults; `mesh` is the reference's
    adapter class or a mutant's."""
    a = mesh(**options)
    a.create_hub("callee")
    a.inject(Fault(fault, "callee", count=count))
    d = a.post("caller", "callee", MessageSpec("Deliver"), route=Route.GRAIN)
    a.run_until_idle(10 * 60_000)
    return a, d


def _count(a: ReferenceAdapter, kind: EventKind, d: str) -> int:
    return sum(1 for e in a.trace() if e.kind is kind and e.delivery_id == d)


def test_retry_delays_are_the_production_ladder() -> None:
    assert [retry_delay_ms(n) for n in range(6)] == [250, 500, 1_000, 2_000, 3_000, 3_000]
    assert sum(retry_delay_ms(n) for n in range(6)) == 9_750


def test_a_timed_out_delivery_is_sent_exactly_once_and_still_runs() -> None:
    a, d = _run(FaultKind.TIMEOUT_NEXT, 7)
    assert _count(a, EventKind.ATTEMPT, d) == 1
    assert _count(a, EventKind.CALL_RECEIVED, d) == 1
    assert _count(a, EventKind.HANDLED, d) == 1  # the callee held it and ran it
    failed = next(e for e in a.trace() if e.kind is EventKind.ATTEMPT_FAILED)
    assert failed.timed_out is True and failed.time_ms == 30_000
    answer = next(e for e in a.trace() if e.kind is EventKind.FAILURE_EMITTED)
    assert (answer.answers, answer.error) == (d, "Failed")


def test_negative_control_gating_on_is_transient_resends_a_timeout_seven_times() -> None:
    a, d = _run(FaultKind.TIMEOUT_NEXT, 7, mesh=mutant_module("M2", "adapter").ReferenceAdapter)
    assert _count(a, EventKind.ATTEMPT, d) == 7
    assert _count(a, EventKind.HANDLED, d) == 7  # duplicate handler execution


def test_a_rejected_delivery_spends_its_budget() -> None:
    a, d = _run(FaultKind.REJECT_NEXT, 7)
    attempts = [e for e in a.trace() if e.kind is EventKind.ATTEMPT]
    assert [e.attempt for e in attempts] == list(range(7))
    assert _count(a, EventKind.CALL_RECEIVED, d) == 0  # the callee holds nothing
    failed = [e for e in a.trace() if e.kind is EventKind.ATTEMPT_FAILED]
    gaps = [nxt.time_ms - f.time_ms for f, nxt in zip(failed, attempts[1:], strict=False)]
    assert gaps == [250, 500, 1_000, 2_000, 3_000, 3_000]
    answer = next(e for e in a.trace() if e.kind is EventKind.FAILURE_EMITTED)
    assert answer.error == "Unavailable"


def test_negative_control_without_the_retry_a_rejection_is_answered_at_once() -> None:
    a, d = _run(FaultKind.REJECT_NEXT, 7, mesh=mutant_module("M11", "adapter").ReferenceAdapter)
    assert _count(a, EventKind.ATTEMPT, d) == 1
    answer = next(e for e in a.trace() if e.kind is EventKind.FAILURE_EMITTED)
    assert (answer.answers, answer.error) == (d, "Unavailable")


def test_with_four_retries_a_rejection_makes_five_calls() -> None:
    a, d = _run(FaultKind.REJECT_NEXT, 5, delivery_retries=4)
    assert _count(a, EventKind.ATTEMPT, d) == 5


def test_a_rejection_then_success_lands_once() -> None:
    a, d = _run(FaultKind.REJECT_NEXT, 2)
    assert _count(a, EventKind.ATTEMPT, d) == 3
    assert _count(a, EventKind.HANDLED, d) == 1
    assert not [e for e in a.trace() if e.kind is EventKind.FAILURE_EMITTED]


def test_the_grain_delivery_is_part_of_its_leg() -> None:
    """The leg ends only once the call has answered (seed 004)."""
    a = ReferenceAdapter()
    a.create_hub("callee")
    a.inject(Fault(FaultKind.SLOW_DESTINATION, "callee", duration_ms=5_000))
    d = a.post("caller", "callee", MessageSpec("Deliver"), route=Route.GRAIN)
    a.advance(4_000)
    assert a.mesh.pool.in_flight == 1
    a.run_until_idle(60_000)
    ended = next(e for e in a.trace() if e.kind is EventKind.LEG_ENDED and e.delivery_id == d)
    enqueued = next(e for e in a.trace() if e.kind is EventKind.ENQUEUED and e.delivery_id == d)
    assert ended.time_ms == 5_001 and ended.seq > enqueued.seq
    assert a.mesh.pool.in_flight == 0


def test_a_missing_target_is_not_found_without_retry() -> None:
    a = ReferenceAdapter()
    d = a.post("caller", "nowhere", MessageSpec("Deliver"), route=Route.GRAIN)
    a.run_until_idle(60_000)
    assert _count(a, EventKind.ATTEMPT, d) == 1
    answer = next(e for e in a.trace() if e.kind is EventKind.FAILURE_EMITTED)
    assert answer.error == "NotFound"


def test_negative_retries_are_refused() -> None:
    with pytest.raises(ValueError, match="retries"):
        ReferenceAdapter(delivery_retries=-1)
