"""Bounded subscribe (seed 001, Invariant 2): a subscription to a missing target errors
terminally after at most N+1 attempts and sends nothing afterwards."""

from __future__ import annotations

import pytest
from ref_mutants import mutant_module

from invariants.adapter import Fault, FaultKind
from invariants.trace import EventKind
from reference_impl.adapter import ReferenceAdapter


def _subscription_events(a: ReferenceAdapter, s: str) -> list[EventKind]:
    return [e.kind for e in a.trace() if e.subscription_id == s]


@pytest.mark.parametrize("retries", [0, 1, 5])
def test_missing_target_terminates_after_retries_plus_one_attempts(retries: int) -> None:
    a = ReferenceAdapter()
    a.create_hub("partition")
    s = a.subscribe("client", "partition/_Thread/does-not-exist", retries=retries)
    a.run_until_idle(10 * 60_000)
    kinds = _subscription_events(a, s)
    assert kinds.count(EventKind.SUBSCRIBE_ATTEMPT) == retries + 1
    assert kinds.count(EventKind.SUBSCRIBE_TERMINATED) == 1
    assert kinds[-1] is EventKind.SUBSCRIBE_TERMINATED  # nothing for it afterwards


def test_retries_wait_250_ms_doubling() -> None:
    a = ReferenceAdapter()
    a.create_hub("partition")
    s = a.subscribe("client", "partition/missing")
    a.run_until_idle(10 * 60_000)
    attempts = [e.time_ms for e in a.trace()
                if e.kind is EventKind.SUBSCRIBE_ATTEMPT and e.subscription_id == s]
    answers = [e.time_ms for e in a.trace()
               if e.kind is EventKind.HANDLED and e.message_type == "DeliveryFailure"]
    gaps = [nxt - got for got, nxt in zip(answers, attempts[1:], strict=False)]
    assert gaps == [250, 500, 1_000, 2_000, 4_000]


def test_every_request_is_dispatched_as_a_leg_naming_its_delivery() -> None:
    a = ReferenceAdapter()
    a.create_hub("partition")
    a.subscribe("client", "partition/missing", retries=2)
    a.run_until_idle(60_000)
    requests = [e.delivery_id for e in a.trace() if e.kind is EventKind.SUBSCRIBE_ATTEMPT]
    legs = [e.delivery_id for e in a.trace()
            if e.kind is EventKind.LEG_STARTED and e.leg_kind == "route"]
    assert len(requests) == 3 and legs == requests


def test_a_request_reaching_a_hub_is_posted_with_its_subscription_id() -> None:
    a = ReferenceAdapter()
    a.create_hub("node")
    s = a.subscribe("client", "node")
    a.run_until_idle(60_000)
    request = next(e for e in a.trace() if e.kind is EventKind.SUBSCRIBE_ATTEMPT)
    posted = [e for e in a.trace() if e.kind is EventKind.POSTED and e.subscription_id == s]
    assert [(e.hub, e.delivery_id) for e in posted] == [("node", request.delivery_id)]


def test_an_existing_target_answers_once_and_nothing_more_is_sent() -> None:
    a = ReferenceAdapter()
    a.create_hub("node")
    s = a.subscribe("client", "node")
    a.run_until_idle(10 * 60_000)
    kinds = _subscription_events(a, s)
    assert kinds.count(EventKind.SUBSCRIBE_ATTEMPT) == 1
    assert EventKind.SUBSCRIBE_ANSWERED in kinds
    assert EventKind.SUBSCRIBE_TERMINATED not in kinds


def test_a_silent_target_times_out_and_retries_then_terminates() -> None:
    """The timeout arm: the target's turn is blocked far longer than every timeout."""
    a = ReferenceAdapter()
    a.create_hub("node")
    a.inject(Fault(FaultKind.BLOCK_HUB, "node", duration_ms=10 * 60_000))
    s = a.subscribe("client", "node", retries=2)
    a.run_until_idle(5 * 60_000)
    terminated = [e for e in a.trace() if e.kind is EventKind.SUBSCRIBE_TERMINATED]
    assert [e.reason for e in terminated] == ["retries_exhausted:timeout"]
    assert _subscription_events(a, s).count(EventKind.SUBSCRIBE_ATTEMPT) == 3
    a.run_until_idle(60 * 60_000)  # the late answers arrive after termination: ignored
    assert _subscription_events(a, s)[-1] is EventKind.SUBSCRIBE_TERMINATED


def test_negative_control_an_unbounded_retry_keeps_sending() -> None:
    """Mutant M3, the pre-fix shape: a NotFound never spends the budget, so the run never
    terminates the subscription."""
    a = mutant_module("M3", "adapter").ReferenceAdapter()
    a.create_hub("partition")
    s = a.subscribe("client", "partition/missing", retries=5)
    a.advance(60 * 60_000)
    assert _subscription_events(a, s).count(EventKind.SUBSCRIBE_ATTEMPT) > 6
    assert EventKind.SUBSCRIBE_TERMINATED not in _subscription_events(a, s)


def test_negative_retries_are_refused() -> None:
    a = ReferenceAdapter()
    with pytest.raises(ValueError, match="retries"):
        a.subscribe("client", "node", retries=-1)


def test_an_active_subscription_ends_when_the_silo_stops() -> None:
    """Nothing is sent for a subscription after the stop has completed (seed 004)."""
    a = ReferenceAdapter()
    a.create_hub("node")
    a.inject(Fault(FaultKind.BLOCK_HUB, "node", duration_ms=10 * 60_000))
    s = a.subscribe("client", "node")
    a.advance(100)
    a.stop(graceful=False)
    a.run_until_idle(60 * 60_000)
    kinds = _subscription_events(a, s)
    assert kinds.count(EventKind.SUBSCRIBE_TERMINATED) == 1
    assert kinds[-1] is EventKind.SUBSCRIBE_TERMINATED
    terminated = next(e for e in a.trace() if e.kind is EventKind.SUBSCRIBE_TERMINATED)
    assert terminated.reason == "silo_stopped"
