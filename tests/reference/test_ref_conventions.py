"""The trace conventions of docs/reference-mesh.md hold on any program and any schedule
(SPEC §2 Observability: the trace is the single source the dynamic checks read)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import pairwise

from hypothesis import example, given, settings
from hypothesis import strategies as st

from invariants.adapter import Fault, FaultKind, MessageSpec, Route, SeededChooser
from invariants.trace import EventKind, MessageClass, TraceEvent, digest
from reference_impl.adapter import ReferenceAdapter

HUBS = ("a", "b", "c/d")
TARGETS = (*HUBS, "missing", "c/d/e")
OUTCOMES = frozenset({EventKind.ENQUEUED, EventKind.REJECTED, EventKind.GATED,
                      EventKind.DROPPED, EventKind.SHED})

posts = st.tuples(
    st.just("post"), st.sampled_from(HUBS), st.sampled_from(TARGETS),
    st.sampled_from(list(MessageClass)), st.sampled_from([None, "k1", "k2"]),
    st.sampled_from(["user", None]), st.sampled_from(list(Route)),
)
faults = st.tuples(
    st.just("fault"), st.sampled_from(list(FaultKind)), st.sampled_from(TARGETS),
    st.sampled_from([10, 1_000, 40_000]), st.integers(1, 7),
)
others = st.one_of(
    st.tuples(st.just("subscribe"), st.sampled_from(HUBS), st.sampled_from(TARGETS),
              st.integers(0, 5)),
    st.tuples(st.just("advance"), st.sampled_from([0, 1, 250, 5_000, 31_000])),
    st.tuples(st.just("stop"), st.booleans()),
)
programs = st.lists(st.one_of(posts, faults, others), max_size=40)


def run(program: list[tuple[object, ...]], seed: int) -> Sequence[TraceEvent]:
    a = ReferenceAdapter(SeededChooser(seed))
    for hub in HUBS:
        a.create_hub(hub, watermark=3)
    for op in program:
        if op[0] == "post":
            _, sender, target, cls, key, identity, route = op
            a.post(str(sender), str(target), MessageSpec("M", cls, key),  # type: ignore[arg-type]
                   identity=identity, route=route)  # type: ignore[arg-type]
        elif op[0] == "fault":
            _, kind, target, duration, count = op
            a.inject(Fault(kind, str(target), duration_ms=duration, count=count))  # type: ignore[arg-type]
        elif op[0] == "subscribe":
            a.subscribe(str(op[1]), str(op[2]), retries=int(op[3]))  # type: ignore[call-overload]
        elif op[0] == "advance":
            a.advance(int(op[1]))  # type: ignore[call-overload]
        else:
            a.stop(graceful=bool(op[1]))
    assert a.run_until_idle(10**8)
    return a.trace()


def check_conventions(trace: Sequence[TraceEvent]) -> None:
    assert [e.seq for e in trace] == list(range(len(trace)))
    assert all(x.time_ms <= y.time_ms for x, y in pairwise(trace))
    # Every intake: POSTED, then exactly one outcome for it at the same hub.
    for i, e in enumerate(trace):
        if e.kind is EventKind.POSTED:
            following = trace[i + 1]
            if following.kind is EventKind.BREAKER_TRIPPED:
                following = trace[i + 2]
            assert following.kind in OUTCOMES
            assert (following.hub, following.delivery_id) == (e.hub, e.delivery_id)
    # Every leg starts once and ends once; the gauge never goes negative.
    started = Counter(e.leg_id for e in trace if e.kind is EventKind.LEG_STARTED)
    ended = Counter(e.leg_id for e in trace if e.kind is EventKind.LEG_ENDED)
    assert started == ended and set(started.values()) <= {1}
    assert all((e.depth or 0) >= 0 for e in trace
               if e.kind in (EventKind.LEG_STARTED, EventKind.LEG_ENDED))
    # A rejected delivery is never answered; no request is answered twice.
    rejected = {e.delivery_id for e in trace if e.kind is EventKind.REJECTED}
    answered = [e.answers for e in trace if e.kind is EventKind.FAILURE_EMITTED]
    assert not rejected & set(answered)
    assert len(answered) == len(set(answered))
    # Each subscription ends at most once, and sends nothing new afterwards: no attempt, and
    # no request it had not announced. An attempt sent before the end may still land later
    # (a slow destination holds it past the subscription's timeout).
    ends = Counter(e.subscription_id for e in trace if e.kind in (
        EventKind.SUBSCRIBE_ANSWERED, EventKind.SUBSCRIBE_TERMINATED))
    assert set(ends.values()) <= {1}
    for e in trace:
        if e.kind in (EventKind.SUBSCRIBE_ANSWERED, EventKind.SUBSCRIBE_TERMINATED):
            own = [x for x in trace if x.subscription_id == e.subscription_id]
            announced = {x.delivery_id for x in own
                         if x.kind is EventKind.SUBSCRIBE_ATTEMPT and x.seq < e.seq}
            assert not [x for x in own if x.seq > e.seq and (
                x.kind is EventKind.SUBSCRIBE_ATTEMPT or x.delivery_id not in announced)]


@settings(max_examples=60, deadline=None)
@given(programs, st.integers(0, 2**16))
# The attempt is held 40 s at its destination, so it lands after the subscription timed out.
@example(program=[("fault", FaultKind.SLOW_DESTINATION, "b", 40_000, 1),
                  ("subscribe", "a", "b", 0)], seed=0)
def test_conventions_hold_for_any_program_and_schedule(
    program: list[tuple[object, ...]], seed: int
) -> None:
    trace = run(program, seed)
    check_conventions(trace)
    assert digest(run(program, seed)) == digest(trace)  # same seed, same trace


def test_negative_control_a_new_attempt_after_the_end_fails_the_convention_check() -> None:
    program: list[tuple[object, ...]] = [
        ("fault", FaultKind.SLOW_DESTINATION, "b", 40_000, 1), ("subscribe", "a", "b", 0)]
    trace = list(run(program, 0))
    check_conventions(trace)  # the late landing of the first attempt is allowed
    end = next(e for e in trace if e.kind is EventKind.SUBSCRIBE_TERMINATED)
    attempt = next(e for e in trace if e.kind is EventKind.SUBSCRIBE_ATTEMPT)
    last = trace[-1]
    again = [*trace, TraceEvent(len(trace), last.time_ms, EventKind.SUBSCRIBE_ATTEMPT,
                                hub=attempt.hub, delivery_id="d99",
                                subscription_id=end.subscription_id, attempt=1)]
    try:
        check_conventions(again)
    except AssertionError:
        return
    raise AssertionError("an attempt after the subscription ended passed the convention check")


def test_negative_control_the_convention_check_fails_on_a_broken_trace() -> None:
    program: list[tuple[object, ...]] = [
        ("post", "a", "missing", MessageClass.USER, None, "user", Route.MONOLITH)]
    trace = list(run(program, 0))
    check_conventions(trace)
    answer = next(e for e in trace if e.kind is EventKind.FAILURE_EMITTED)
    last = trace[-1]
    twice = [*trace, TraceEvent(len(trace), last.time_ms, EventKind.FAILURE_EMITTED,
                                answers=answer.answers)]
    try:
        check_conventions(twice)
    except AssertionError:
        return
    raise AssertionError("a request answered twice passed the convention check")
