"""Runnable scenarios, each the shape of a test from the seeds, with the figures it pins.

Every scenario runs one reference mesh under `SeededChooser(seed)` and returns its trace
and a summary of figures computed from that trace alone (plus the mesh's own counters
where the figure is a counter). The figures hold for every seed; the trace is identical
for the same seed in any process.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from invariants.adapter import Fault, FaultKind, MessageSpec, Route, SeededChooser
from invariants.trace import EventKind, MessageClass, TraceEvent
from reference_impl.adapter import ReferenceAdapter
from reference_impl.envelope import Delivery
from reference_impl.figures import (
    count,
    first,
    leg_start,
    non_sheddable_shed,
    retry_delay,
    stop_figures,
)
from reference_impl.messages import HEARTBEAT, DeliveryFailure, ErrorType, Message

USER = MessageSpec("Probe")
HEARTBEAT_SPEC = MessageSpec(HEARTBEAT, MessageClass.IGNORABLE)
IDLE_LIMIT_MS = 10 * 60 * 1000

@dataclass(frozen=True)
class ScenarioRun:
    name: str
    seed: int
    trace: Sequence[TraceEvent]
    summary: dict[str, Any]


def _adapter(seed: int, **options: Any) -> ReferenceAdapter:
    return ReferenceAdapter(SeededChooser(seed), **options)


# Aggregate watermark (seed 001, Invariant 3) ------------------------------------------

def flood(seed: int) -> ScenarioRun:
    """Watermark 25, the hub's turn blocked, 200 can-be-ignored messages, one user probe."""
    a = _adapter(seed)
    a.create_hub("hub", watermark=25)
    a.inject(Fault(FaultKind.BLOCK_HUB, "hub", duration_ms=1_000))
    for _ in range(200):
        a.post("flooder", "hub", HEARTBEAT_SPEC, route=Route.DIRECT)
    probe = a.post("prober", "hub", USER, route=Route.DIRECT)
    a.run_until_idle(IDLE_LIMIT_MS)
    trace = a.trace()
    hub = a.mesh.hubs["hub"]
    handled = first(trace, EventKind.HANDLED, delivery_id=probe)
    released = first(trace, EventKind.TURN_RELEASED, hub="hub")
    return ScenarioRun("flood", seed, trace, {
        "shed_count": hub.watermark.shed_count,
        "trip_count": hub.breaker.trip_count,
        "probe_handled": handled is not None,
        "probe_handled_ms_after_release": (
            handled.time_ms - released.time_ms if handled and released else None
        ),
        "max_depth": max((e.depth or 0) for e in trace if e.kind is EventKind.ENQUEUED),
        "non_sheddable_shed": non_sheddable_shed(trace),
    })


# Per-key storm breaker (seed 001, #1200) ------------------------------------------------

def fanout(seed: int) -> ScenarioRun:
    """One sender, one target, one type, 5,000 distinct payload identities in one window."""
    a = _adapter(seed)
    a.create_hub("mesh")
    for i in range(5_000):
        a.post("importer", "mesh", MessageSpec("CreateOrUpdateNode", diagnostic_key=f"node/{i}"),
               route=Route.DIRECT)
    a.run_until_idle(IDLE_LIMIT_MS)
    trace = a.trace()
    hub = a.mesh.hubs["mesh"]
    return ScenarioRun("fanout", seed, trace, {
        "drops": count(trace, EventKind.DROPPED),
        "trip_count": hub.breaker.trip_count,
        "handled": hub.handled_count,
        "window_ms": trace[-1].time_ms - trace[0].time_ms if trace else 0,
    })


def storm(seed: int) -> ScenarioRun:
    """2,001 messages on one key within one window: the 2001st trips and is dropped."""
    a = _adapter(seed)
    a.create_hub("cache")
    for _ in range(2_001):
        a.post("owner", "cache", MessageSpec("UpdateStream", diagnostic_key="stream/1"),
               route=Route.DIRECT)
    a.run_until_idle(IDLE_LIMIT_MS)
    trace = a.trace()
    hub = a.mesh.hubs["cache"]
    return ScenarioRun("storm", seed, trace, {
        "trip_count": hub.breaker.trip_count,
        "drops": count(trace, EventKind.DROPPED),
        "handled": hub.handled_count,
        "failures_emitted": count(trace, EventKind.FAILURE_EMITTED),
    })


# Bounded subscribe (seed 001, Invariant 2) -----------------------------------------------

def missing_target(seed: int) -> ScenarioRun:
    """Subscribe to a path that does not exist under a live prefix."""
    a = _adapter(seed)
    a.create_hub("partition")
    a.create_hub("client")
    subscription = a.subscribe("client", "partition/_Thread/does-not-exist")
    a.run_until_idle(IDLE_LIMIT_MS)
    a.advance(60_000)  # long after: nothing more may be sent
    trace = a.trace()
    terminated = first(trace, EventKind.SUBSCRIBE_TERMINATED, subscription_id=subscription)
    after = [] if terminated is None else [
        e for e in trace[terminated.seq + 1:]
        if e.subscription_id == subscription and e.kind in (
            EventKind.POSTED, EventKind.SUBSCRIBE_ATTEMPT)
    ]
    return ScenarioRun("missing-target", seed, trace, {
        "attempts": count(trace, EventKind.SUBSCRIBE_ATTEMPT, subscription_id=subscription),
        "terminated": terminated is not None,
        "terminated_at_ms": terminated.time_ms if terminated else None,
        "sent_after_termination": len(after),
        "not_found_answers": count(trace, EventKind.FAILURE_EMITTED, error="NotFound"),
    })


# Rejection is terminal (seed 001 Invariant 1, seed 004) ----------------------------------

def rejection(seed: int) -> ScenarioRun:
    """A post with no identity (not exempt); then the same rejected post 100 times."""
    a = _adapter(seed)
    a.create_hub("composer")
    a.post("portal", "composer", MessageSpec("UpdateStreamRequest"), identity=None)
    a.run_until_idle(IDLE_LIMIT_MS)
    single = list(a.trace())
    for _ in range(100):
        a.post("portal-2", "composer", MessageSpec("UpdateStreamRequest"), identity=None)
    a.run_until_idle(IDLE_LIMIT_MS)
    trace = a.trace()
    repeated = trace[len(single):]
    return ScenarioRun("rejection", seed, trace, {
        "rejections": count(single, EventKind.REJECTED),
        "failures_emitted": count(single, EventKind.FAILURE_EMITTED),
        "reposts": count(single, EventKind.POSTED, message_class=MessageClass.FAILURE),
        "rejections_repeated": count(repeated, EventKind.REJECTED),
        "follow_ups_repeated": count(repeated, EventKind.POSTED) - 100,
        "failure_traffic_repeated": count(repeated, EventKind.FAILURE_EMITTED)
        + count(repeated, EventKind.POSTED, message_class=MessageClass.FAILURE),
    })


# Timeouts are not re-sent; rejections are (seed 000) -------------------------------------

def timeout(seed: int) -> ScenarioRun:
    """A grain delivery whose call outlives the response timeout (armed for 7 calls)."""
    a = _adapter(seed)
    a.create_hub("compile")
    a.inject(Fault(FaultKind.TIMEOUT_NEXT, "compile", count=7))
    delivery = a.post("portal", "compile", USER, route=Route.GRAIN)
    a.run_until_idle(IDLE_LIMIT_MS)
    trace = a.trace()
    answer = first(trace, EventKind.FAILURE_EMITTED, answers=delivery)
    return ScenarioRun("timeout", seed, trace, {
        "calls_at_callee": count(trace, EventKind.ATTEMPT, delivery_id=delivery),
        "copies_received": count(trace, EventKind.CALL_RECEIVED, delivery_id=delivery),
        "copies_handled": count(trace, EventKind.HANDLED, delivery_id=delivery),
        "answer": answer.error if answer else None,
        "answered_at_ms": answer.time_ms if answer else None,
    })


def rejection_retry(seed: int) -> ScenarioRun:
    """Invalid activation on every call: 7 calls and 9.75 s of retry delay; then the same
    with a budget of 4 retries: 5 calls."""
    a = _adapter(seed)
    a.create_hub("pod")
    a.inject(Fault(FaultKind.REJECT_NEXT, "pod", count=7))
    full = a.post("portal", "pod", USER, route=Route.GRAIN)
    a.run_until_idle(IDLE_LIMIT_MS)
    a.mesh.grain.retries = 4
    a.inject(Fault(FaultKind.REJECT_NEXT, "pod", count=5))
    second = a.post("portal", "pod", USER, route=Route.GRAIN)
    a.run_until_idle(IDLE_LIMIT_MS)
    trace = a.trace()
    answer = first(trace, EventKind.FAILURE_EMITTED, answers=full)
    return ScenarioRun("rejection-retry", seed, trace, {
        "calls_at_callee": count(trace, EventKind.ATTEMPT, delivery_id=full),
        "retry_delay_ms": retry_delay(trace, full),
        "copies_received": count(trace, EventKind.CALL_RECEIVED, delivery_id=full),
        "answer": answer.error if answer else None,
        "calls_at_callee_4_retries": count(trace, EventKind.ATTEMPT, delivery_id=second),
    })


# One answer per request, also after packaging (seed 001 #1485) ---------------------------

def answer_once(seed: int) -> ScenarioRun:
    """On a stopping host, a packaged heartbeat, a packaged DeliveryFailure and an ordinary
    control message through each router; again after a JSON round trip of the envelopes."""
    a = _adapter(seed)
    mesh = a.mesh
    a.create_hub("owner")
    a.create_hub("slow")
    a.inject(Fault(FaultKind.SLOW_DESTINATION, "slow", duration_ms=5_000))
    a.post("keeper", "slow", USER)  # keeps the stop holding at Active
    a.stop(graceful=True)
    a.advance(1)
    cases: dict[str, str] = {}
    for router in (mesh.monolith, mesh.grain):
        for roundtrip in (False, True):
            sender = f"sender-{router.name}{'-roundtrip' if roundtrip else ''}"
            cases[sender] = sender
            mesh.ensure_hub(sender)
            payloads: tuple[Message, ...] = (
                Message(HEARTBEAT, MessageClass.IGNORABLE),
                DeliveryFailure.as_payload(mesh.new_id("x"), ErrorType.NOT_FOUND),
                Message("ControlRequest"),
            )
            for payload in payloads:
                delivery = Delivery(mesh.new_id("d"), sender, "owner", payload).package()
                if roundtrip:
                    delivery = Delivery.from_json(_json_roundtrip(delivery.to_json()))
                router.dispatch(delivery)
    a.run_until_idle(IDLE_LIMIT_MS)
    trace = a.trace()
    nacks = {
        sender: count(trace, EventKind.POSTED, hub=sender, message_class=MessageClass.FAILURE)
        for sender in cases
    }
    return ScenarioRun("answer-once", seed, trace, {
        "nacks_at_sender": nacks,
        "refused": count(trace, EventKind.DISPATCH_REFUSED),
        "suppressed": count(trace, EventKind.ANSWER_SUPPRESSED, reason="may_answer_false"),
    })


def _json_roundtrip(data: dict[str, Any]) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(json.dumps(data))
    return loaded


# Silo stop (seed 004 #2638) --------------------------------------------------------------

def _legs_in_flight(a: ReferenceAdapter) -> None:
    a.create_hub("planning")
    a.create_hub("cache")
    a.inject(Fault(FaultKind.SLOW_DESTINATION, "planning", duration_ms=5_000))
    # The last leg to finish is answered NotFound: its NACK is the last routing work.
    a.inject(Fault(FaultKind.SLOW_DESTINATION, "cache/gone", duration_ms=6_000))
    for _ in range(3):
        a.post("portal", "planning", USER, route=Route.GRAIN)
    a.post("portal", "cache", USER)
    a.post("portal", "cache/gone", USER)
    a.advance(100)


def _stop_with_legs_in_flight(name: str, seed: int, *, graceful: bool) -> ScenarioRun:
    a = _adapter(seed)
    _legs_in_flight(a)
    a.stop(graceful=graceful)
    a.run_until_idle(IDLE_LIMIT_MS)
    trace = a.trace()
    return ScenarioRun(name, seed, trace, {
        **stop_figures(trace),
        "drained_legs": count(trace, EventKind.LEG_ENDED, reason="drained"),
    })


def stop_with_legs(seed: int) -> ScenarioRun:
    return _stop_with_legs_in_flight("stop-with-legs", seed, graceful=True)


def stop_budget_expiry(seed: int) -> ScenarioRun:
    """Legs that outlive the 30 s budget: released at 30 s, the residual named oldest first."""
    a = _adapter(seed)
    a.create_hub("import")
    a.inject(Fault(FaultKind.SLOW_DESTINATION, "import", duration_ms=45_000))
    a.post("portal", "import", USER)
    a.advance(10)
    a.post("portal-2", "import", USER)
    a.advance(90)
    a.stop(graceful=True)
    a.run_until_idle(IDLE_LIMIT_MS)
    trace = a.trace()
    residual = [e for e in trace if e.kind is EventKind.RESIDUAL_LEG]
    return ScenarioRun("stop-budget-expiry", seed, trace, {
        **stop_figures(trace),
        "residual_legs": [e.leg_id for e in residual],
        "residual_started_ms": [leg_start(trace, e.leg_id) for e in residual],
        "drained_legs": count(trace, EventKind.LEG_ENDED, reason="drained"),
    })


def stop_non_graceful(seed: int) -> ScenarioRun:
    return _stop_with_legs_in_flight("stop-non-graceful", seed, graceful=False)


SCENARIOS: MappingProxyType[str, Callable[[int], ScenarioRun]] = MappingProxyType({
    "flood": flood,
    "fanout": fanout,
    "storm": storm,
    "missing-target": missing_target,
    "rejection": rejection,
    "timeout": timeout,
    "rejection-retry": rejection_retry,
    "answer-once": answer_once,
    "stop-with-legs": stop_with_legs,
    "stop-budget-expiry": stop_budget_expiry,
    "stop-non-graceful": stop_non_graceful,
})


def run_scenario(name: str, seed: int) -> ScenarioRun:
    try:
        scenario = SCENARIOS[name]
    except KeyError:
        raise ValueError(
            f"unknown scenario {name!r}; known: {', '.join(SCENARIOS)}"
        ) from None
    return scenario(seed)
