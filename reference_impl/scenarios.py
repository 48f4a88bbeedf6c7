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
from reference_impl.messages import HEARTBEAT, DeliveryFailure, ErrorType, Message

USER = MessageSpec("Probe")
HEARTBEAT_SPEC = MessageSpec(HEARTBEAT, MessageClass.IGNORABLE)
IDLE_LIMIT_MS = 10 * 60 * 1000

ROUTING_KINDS = frozenset({
    EventKind.LEG_STARTED, EventKind.LEG_ENDED, EventKind.ATTEMPT, EventKind.ATTEMPT_FAILED,
    EventKind.CALL_RECEIVED, EventKind.FAILURE_EMITTED,
})


@dataclass(frozen=True)
class ScenarioRun:
    name: str
    seed: int
    trace: Sequence[TraceEvent]
    summary: dict[str, Any]


def _adapter(seed: int, **options: Any) -> ReferenceAdapter:
    return ReferenceAdapter(SeededChooser(seed), **options)


def _count(trace: Sequence[TraceEvent], kind: EventKind, **where: Any) -> int:
    return sum(
        1 for e in trace
        if e.kind is kind and all(getattr(e, k) == v for k, v in where.items())
    )


def _first(trace: Sequence[TraceEvent], kind: EventKind, **where: Any) -> TraceEvent | None:
    for e in trace:
        if e.kind is kind and all(getattr(e, k) == v for k, v in where.items()):
            return e
    return None


def routing_after_stop(trace: Sequence[TraceEvent]) -> int:
    """Routing-related events after STOP_COMPLETED (route/NACK legs, calls, answers, packaged
    arrivals). Must be 0."""
    done = _first(trace, EventKind.STOP_COMPLETED)
    if done is None:
        return 0
    return sum(
        1 for e in trace[done.seq + 1:]
        if e.kind in ROUTING_KINDS or (e.kind is EventKind.POSTED and e.packaged)
    )


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
    handled = _first(trace, EventKind.HANDLED, delivery_id=probe)
    released = _first(trace, EventKind.TURN_RELEASED, hub="hub")
    return ScenarioRun("flood", seed, trace, {
        "shed_count": hub.watermark.shed_count,
        "trip_count": hub.breaker.trip_count,
        "probe_handled": handled is not None,
        "probe_handled_ms_after_release": (
            handled.time_ms - released.time_ms if handled and released else None
        ),
        "max_depth": max((e.depth or 0) for e in trace if e.kind is EventKind.ENQUEUED),
        "non_sheddable_shed": _non_sheddable_shed(trace),
    })


def _non_sheddable_shed(trace: Sequence[TraceEvent]) -> int:
    """SHED events for deliveries posted with a class that must never be shed."""
    classes = {e.delivery_id: e.message_class for e in trace if e.kind is EventKind.POSTED}
    return sum(
        1 for e in trace
        if e.kind is EventKind.SHED and classes.get(e.delivery_id) is not MessageClass.IGNORABLE
    )


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
        "drops": _count(trace, EventKind.DROPPED),
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
        "drops": _count(trace, EventKind.DROPPED),
        "handled": hub.handled_count,
        "failures_emitted": _count(trace, EventKind.FAILURE_EMITTED),
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
    terminated = _first(trace, EventKind.SUBSCRIBE_TERMINATED, subscription_id=subscription)
    after = [] if terminated is None else [
        e for e in trace[terminated.seq + 1:]
        if e.subscription_id == subscription and e.kind in (
            EventKind.POSTED, EventKind.SUBSCRIBE_ATTEMPT)
    ]
    return ScenarioRun("missing-target", seed, trace, {
        "attempts": _count(trace, EventKind.SUBSCRIBE_ATTEMPT, subscription_id=subscription),
        "terminated": terminated is not None,
        "terminated_at_ms": terminated.time_ms if terminated else None,
        "sent_after_termination": len(after),
        "not_found_answers": _count(trace, EventKind.FAILURE_EMITTED, error="NotFound"),
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
        "rejections": _count(single, EventKind.REJECTED),
        "failures_emitted": _count(single, EventKind.FAILURE_EMITTED),
        "reposts": _count(single, EventKind.POSTED, message_class=MessageClass.FAILURE),
        "rejections_repeated": _count(repeated, EventKind.REJECTED),
        "follow_ups_repeated": _count(repeated, EventKind.POSTED) - 100,
        "failure_traffic_repeated": _count(repeated, EventKind.FAILURE_EMITTED)
        + _count(repeated, EventKind.POSTED, message_class=MessageClass.FAILURE),
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
    answer = _first(trace, EventKind.FAILURE_EMITTED, answers=delivery)
    return ScenarioRun("timeout", seed, trace, {
        "calls_at_callee": _count(trace, EventKind.ATTEMPT, delivery_id=delivery),
        "copies_received": _count(trace, EventKind.CALL_RECEIVED, delivery_id=delivery),
        "copies_handled": _count(trace, EventKind.HANDLED, delivery_id=delivery),
        "answer": answer.error if answer else None,
        "answered_at_ms": answer.time_ms if answer else None,
    })


def rejection_retry(seed: int) -> ScenarioRun:
    """Invalid activation on every call: 7 calls and 9.75 s of retry delay; then the same
    with a budget of 4 retries: 5 calls."""
    a = _adapter(seed)
    a.create_hub("pod")
    a.inject(Fault(FaultKind.REJECT_NEXT, "pod", count=7))
    first = a.post("portal", "pod", USER, route=Route.GRAIN)
    a.run_until_idle(IDLE_LIMIT_MS)
    a.mesh.grain.retries = 4
    a.inject(Fault(FaultKind.REJECT_NEXT, "pod", count=5))
    second = a.post("portal", "pod", USER, route=Route.GRAIN)
    a.run_until_idle(IDLE_LIMIT_MS)
    trace = a.trace()
    answer = _first(trace, EventKind.FAILURE_EMITTED, answers=first)
    return ScenarioRun("rejection-retry", seed, trace, {
        "calls_at_callee": _count(trace, EventKind.ATTEMPT, delivery_id=first),
        "retry_delay_ms": _retry_delay(trace, first),
        "copies_received": _count(trace, EventKind.CALL_RECEIVED, delivery_id=first),
        "answer": answer.error if answer else None,
        "calls_at_callee_4_retries": _count(trace, EventKind.ATTEMPT, delivery_id=second),
    })


def _retry_delay(trace: Sequence[TraceEvent], delivery_id: str) -> int:
    """Sum of the gaps between an attempt failing and the next attempt starting."""
    total, failed_at = 0, None
    for e in trace:
        if e.delivery_id != delivery_id:
            continue
        if e.kind is EventKind.ATTEMPT_FAILED:
            failed_at = e.time_ms
        elif e.kind is EventKind.ATTEMPT and failed_at is not None:
            total += e.time_ms - failed_at
            failed_at = None
    return total


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
        sender: _count(trace, EventKind.POSTED, hub=sender, message_class=MessageClass.FAILURE)
        for sender in cases
    }
    return ScenarioRun("answer-once", seed, trace, {
        "nacks_at_sender": nacks,
        "refused": _count(trace, EventKind.DISPATCH_REFUSED),
        "suppressed": _count(trace, EventKind.ANSWER_SUPPRESSED, reason="may_answer_false"),
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


def _stop_figures(trace: Sequence[TraceEvent]) -> dict[str, Any]:
    entered = [e for e in trace if e.kind is EventKind.STOP_STAGE_ENTERED]
    deactivation = next((e for e in entered if e.stage == 19_998), None)
    released = _first(trace, EventKind.STOP_HOLD_RELEASED)
    requested = _first(trace, EventKind.STOP_REQUESTED)
    completed = _first(trace, EventKind.STOP_COMPLETED)
    return {
        "in_flight_at_deactivation": deactivation.depth if deactivation else None,
        "held": _first(trace, EventKind.STOP_HOLD_STARTED) is not None,
        "hold_release": released.reason if released else None,
        "held_ms": (released.time_ms - requested.time_ms) if released and requested else None,
        "stop_completed": completed is not None,
        "routing_after_stop": routing_after_stop(trace),
        "stages": [e.stage for e in entered],
    }


def stop_with_legs(seed: int) -> ScenarioRun:
    a = _adapter(seed)
    _legs_in_flight(a)
    a.stop(graceful=True)
    a.run_until_idle(IDLE_LIMIT_MS)
    trace = a.trace()
    return ScenarioRun("stop-with-legs", seed, trace, {
        **_stop_figures(trace),
        "drained_legs": _count(trace, EventKind.LEG_ENDED, reason="drained"),
    })


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
        **_stop_figures(trace),
        "residual_legs": [e.leg_id for e in residual],
        "residual_started_ms": [_leg_start(trace, e.leg_id) for e in residual],
        "drained_legs": _count(trace, EventKind.LEG_ENDED, reason="drained"),
    })


def _leg_start(trace: Sequence[TraceEvent], leg_id: str | None) -> int | None:
    started = _first(trace, EventKind.LEG_STARTED, leg_id=leg_id)
    return started.time_ms if started else None


def stop_non_graceful(seed: int) -> ScenarioRun:
    a = _adapter(seed)
    _legs_in_flight(a)
    a.stop(graceful=False)
    a.run_until_idle(IDLE_LIMIT_MS)
    trace = a.trace()
    return ScenarioRun("stop-non-graceful", seed, trace, {
        **_stop_figures(trace),
        "drained_legs": _count(trace, EventKind.LEG_ENDED, reason="drained"),
    })


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
