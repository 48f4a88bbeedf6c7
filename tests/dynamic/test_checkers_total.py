"""Every trace checker is total: whatever trace it is given (any event kind with plausible
or implausible fields, times and positions out of order, ids nobody announced, events
duplicated, dropped or renumbered) it returns its verdict and its evidence, and never raises.

Two sources of traces: the trace grammar itself (`TraceEvent`'s fields and their types,
every `EventKind`, every harness fact type), and real reference-mesh traces recorded from
the seed programs with the facts the harness told, then mutated. Every checker in the
registry (`CHECK_RECORDS`) is run on each, whole and fed in two pieces as the judge feeds
it, with the harness facts and without. Then the shapes that raised, each beside its
well-formed control: an event whose earlier events were lost is judged as what it is.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import types
import typing
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from dyn_traces import K, Trace
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from invariants.adapter import Capability, FaultKind, Route
from invariants.checks import (
    CHECK_RECORDS,
    DEFAULT_PARAMS,
    CheckParams,
    HarnessFact,
    Injected,
    Monitor,
    Violation,
    monitor_for,
)
from invariants.checks.harness_facts import interleave
from invariants.checks.inv4_no_resend_after_timeout import (
    AGGREGATE_REJECTION_FIRST,
    AGGREGATE_TIMEOUT_FIRST,
    DELAYS,
    TRANSIENT_ERRORS,
)
from invariants.checks.inv6_fanout_not_dropped import DROPS
from invariants.checks.inv7_answer_once import (
    ACCEPTED,
    ANSWERED,
    LANDED,
    NOT_FOUND_ERRORS,
    SHUTTING_DOWN_ERRORS,
)
from invariants.dynamic.plans import machine_class
from invariants.dynamic.seed_programs import SEED_PROGRAMS, Program, resolved
from invariants.trace import EventKind, TraceEvent
from reference_impl.adapter import make_adapter

TOTAL = settings(derandomize=True, database=None, max_examples=30, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
RECORDS = {record.id: record for record in CHECK_RECORDS}

# Real traces ------------------------------------------------------------------------------

# Seed programs of every checker, INV6's stormed at a breaker threshold of 8 (tens of posts,
# not thousands).
RECORDED = (("INV1", "failure-ping-pong"), ("INV2", "answer-in-backoff"),
            ("INV3", "hold-inside-a-hold"), ("INV4", "aggregate"), ("INV4", "one-rejection"),
            ("INV5", "stop-nack-in-flight"), ("INV5", "stop-budget-expiry"),
            ("INV6", "storm"), ("INV6", "window-edges"), ("INV7", "answer-once"),
            ("INV7", "raising-handler"), ("INV7", "departed-owner"))
SMALL_BREAKERS = {"breaker_thresholds": (8, 8, 8)}


@dataclasses.dataclass(frozen=True)
class Recorded:
    trace: tuple[TraceEvent, ...]
    facts: tuple[HarnessFact, ...]
    params: CheckParams
    capabilities: frozenset[Capability]

    def verdict(self, check_id: str, trace: Sequence[TraceEvent] | None = None
                ) -> tuple[list[Violation], Monitor]:
        """`check_id` at quiescence on this run's trace (or `trace`) and its facts."""
        monitor = monitor_for(check_id, self.params, self.capabilities)
        found = _run(monitor, self.trace if trace is None else trace, self.facts, final=True)
        return found, monitor


@functools.cache
def recorded(check_id: str, name: str) -> Recorded:
    """The reference mesh's trace of a seed program, run to quiescence, and the facts the
    harness told its checkers (each in its place: the trace is read after every step)."""
    program: Program = tuple(
        (step, {**arguments, **SMALL_BREAKERS} if step == "init" and check_id == "INV6"
         else arguments)
        for step, arguments in resolved(SEED_PROGRAMS[check_id][name], DEFAULT_PARAMS))
    machine = machine_class(check_id, make_adapter)()
    told: list[HarnessFact] = []
    tell = machine.judge.tell

    def record(fact: HarnessFact) -> None:
        told.append(fact)
        tell(fact)

    machine.judge.tell = record  # type: ignore[method-assign]
    for step, arguments in program:
        getattr(machine, step)(**arguments)
        machine.judge.feed(machine.mesh)
    machine.mesh.run_until_idle(600_000)
    return Recorded(tuple(machine.mesh.trace()), tuple(told), machine.params,
                    machine.judge.monitors[0].capabilities)


# Recorded now, outside any Hypothesis test: a machine run inside one reports its events
# and targets to it, which would steer the generation of the test that happened to run first.
RECORDINGS = {run: recorded(*run) for run in RECORDED}


# The grammar ------------------------------------------------------------------------------

# Values the fields draw from: a few ids and places, so events refer to each other, and
# the words the checkers compare fields with (the figures' own sets where they list them).
IDS = ("d1", "d2", "d3", "n1", "s1", "L1")
PLACES = ("h0", "h1", "peer", "client", "router", "g")
WORDS = tuple(sorted({
    *DEFAULT_PARAMS.unlanded_reasons, *DEFAULT_PARAMS.resendable_errors,
    *NOT_FOUND_ERRORS, *SHUTTING_DOWN_ERRORS, *TRANSIENT_ERRORS,
    *(kind.value for kind in FaultKind), *(route.value for route in Route),
    "budget", "failed", "completed", "nack", "Request", "stream/1",
}))
_BY_NAME = {
    **dict.fromkeys(("delivery_id", "answers", "subscription_id", "leg_id"), IDS),
    **dict.fromkeys(("hub", "sender", "target", "subscriber"), PLACES),
}
INTS = (-1, 0, 1, 2, 3, 6, 8, 250, 1_000, 2_000, 10_000, 30_000, -(2**40), 2**40,
        *DEFAULT_PARAMS.stop_stages.values())
STEPS = (0, 0, 1, 249, 250, 999, 1_000, 2_000, 30_000, 40_000)  # time between events


def _values(name: str, hint: Any) -> tuple[Any, ...]:
    """The values a field draws from, by its type; numbers too where a string is due (a
    foreign mesh's JSON may number its deliveries)."""
    args = typing.get_args(hint)
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return (None, *(v for a in args if a is not type(None) for v in _values(name, a)))
    if typing.get_origin(hint) is tuple:
        return ((), _values(name, args[0])[:2], _values(name, args[0])[:4])
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return tuple(hint)
    if hint is bool:
        return (True, False)
    if hint is int:
        return INTS
    if hint is str:
        return (*_BY_NAME.get(name, WORDS) * 3, *IDS, *PLACES, *WORDS, "", 1, 2)
    raise TypeError(f"no values for field {name}: {hint!r}")


def _fields(cls: type, skip: frozenset[str] = frozenset()) -> dict[str, st.SearchStrategy[Any]]:
    hints = typing.get_type_hints(cls)
    return {f.name: st.sampled_from(_values(f.name, hints[f.name]))
            for f in dataclasses.fields(cls) if f.name not in skip}


EVENT_FIELDS = _fields(TraceEvent, frozenset({"seq", "time_ms", "kind"}))
facts_of = st.one_of(*(st.builds(cls, **_fields(cls)) for cls in typing.get_args(HarnessFact)))


@functools.cache
def carried() -> dict[EventKind, tuple[str, ...]]:
    """The fields each kind states in the reference mesh's recorded traces."""
    names: dict[EventKind, set[str]] = {}
    for run in RECORDINGS.values():
        for event in run.trace:
            names.setdefault(event.kind, set()).update(event.to_json())
    return {kind: tuple(sorted(found & set(EVENT_FIELDS))) for kind, found in names.items()}


@st.composite
def grammar_events(draw: st.DrawFn, seq: int, time_ms: int) -> TraceEvent:
    """An event of any kind: the fields the reference states on it, one of them perhaps
    left out and one other perhaps set, each any value of its type."""
    kind = draw(st.sampled_from(list(EventKind)))
    usual = carried().get(kind, ())
    left_out = draw(st.sampled_from((None, None, *usual)))
    extra = draw(st.sampled_from((None, None, *EVENT_FIELDS)))
    names = sorted({name for name in (*usual, extra) if name is not None and name != left_out})
    return TraceEvent(seq, time_ms, kind, **{name: draw(EVENT_FIELDS[name]) for name in names})


@st.composite
def grammar_traces(draw: st.DrawFn) -> list[TraceEvent]:
    """Events of every kind; times moving forward or anywhere, positions in order or not."""
    ordered_times, ordered_seqs = draw(st.booleans()), draw(st.booleans())
    now, events = 0, []
    for index in range(draw(st.integers(0, 20))):
        now = now + draw(st.sampled_from(STEPS)) if ordered_times else draw(st.sampled_from(INTS))
        seq = index if ordered_seqs else draw(st.sampled_from(INTS))
        events.append(draw(grammar_events(seq, now)))
    return events


PARAMS = (
    DEFAULT_PARAMS,
    CheckParams(watermark=2, breaker_threshold=2, subscribe_retries=1, delivery_retries=1,
                stop_budget_ms=1_000, probe_deadline_ms=1_000, breaker_max_keys=2,
                subscribe_timeout_ms=1_000, response_timeout_ms=1_000),
    CheckParams(breaker_windows="any", breaker_threshold=8, ordered_routes=frozenset(Route)),
)

# Mutations of real traces -----------------------------------------------------------------

MUTATIONS = ("truncate", "drop", "drop", "duplicate", "move", "rename", "renumber", "forget")


def _renamed(event: TraceEvent, old: object, new: object) -> TraceEvent:
    changes = {name: new for name in _BY_NAME if getattr(event, name, None) == old}
    return dataclasses.replace(event, **changes) if changes else event


@st.composite
def mutated(draw: st.DrawFn) -> tuple[Recorded, list[TraceEvent], list[HarnessFact]]:
    """A recorded trace truncated, with events dropped, duplicated or moved, an id renamed
    (on some events or on all, to another id or one nobody announced), its positions
    renumbered; some of its facts lost."""
    base = RECORDINGS[draw(st.sampled_from(RECORDED))]
    events, facts = list(base.trace), list(base.facts)
    for op in draw(st.lists(st.sampled_from(MUTATIONS), min_size=1, max_size=4)):
        if not events:
            break
        at = draw(st.integers(0, len(events) - 1))
        if op == "truncate":
            events = events[:at]
        elif op == "drop":
            del events[at]
        elif op == "duplicate":
            events.insert(draw(st.integers(0, len(events))), events[at])
        elif op == "move":
            events.insert(draw(st.integers(0, len(events) - 1)), events.pop(at))
        elif op == "rename":
            names = sorted({str(getattr(e, n)) for e in events for n in _BY_NAME
                            if getattr(e, n, None) is not None} or {"d1"})
            old, new = draw(st.sampled_from(names)), draw(st.sampled_from([*names, "unknown"]))
            every = draw(st.booleans())
            events = [_renamed(e, old, new) if every or draw(st.booleans()) else e
                      for e in events]
        elif op == "renumber":
            events = [dataclasses.replace(e, seq=i) for i, e in enumerate(events)]
        else:
            facts = [f for f in facts if draw(st.booleans())]
    return base, events, facts


# Running a checker ------------------------------------------------------------------------


def _run(monitor: Monitor, trace: Sequence[TraceEvent], facts: Sequence[HarnessFact], *,
         final: bool) -> list[Violation]:
    for item in interleave(trace, facts):
        if isinstance(item, TraceEvent):
            monitor.feed((item,))
        else:
            monitor.tell(item)
    return monitor.violations(final=final)


def verdicts(fresh: Callable[[], Monitor], trace: Sequence[TraceEvent],
             facts: Sequence[HarnessFact], cut: int) -> None:
    """One checker on `trace` and `facts`: whole, then fed in two pieces with its verdict
    asked between, as the judge feeds it. Its verdicts read as text, its evidence names
    every obligation, and the run-level questions on its counts are answered."""
    whole = fresh()
    found = _run(whole, trace, facts, final=True)
    stepped = fresh()
    _run(stepped, trace[:cut], [f for f in facts if f.seq <= cut], final=False)
    rest = [dataclasses.replace(f, seq=f.seq - cut) for f in facts if f.seq > cut]
    found += _run(stepped, trace[cut:], rest, final=True)
    assert all(str(violation) for violation in found)
    monitor = type(whole)
    assert set(monitor.obligations) <= set(whole.evidence)
    counts = {**whole.context, **whole.evidence}
    monitor.across_examples(whole.evidence, whole.context)
    assert all(monitor.cause(name, counts) for name in monitor.obligations)


@pytest.mark.parametrize("check_id", RECORDS)
@TOTAL
@given(trace=grammar_traces(), facts=st.lists(facts_of, max_size=6),
       params=st.sampled_from(PARAMS), capabilities=st.none() | st.frozensets(
           st.sampled_from(list(Capability))), cut=st.integers(0, 20))
def test_a_checker_returns_a_verdict_on_any_trace_of_the_grammar(
    check_id: str, trace: list[TraceEvent], facts: list[HarnessFact], params: CheckParams,
    capabilities: frozenset[Capability] | None, cut: int,
) -> None:
    verdicts(lambda: monitor_for(check_id, params, capabilities), trace, facts, cut)
    verdicts(lambda: monitor_for(check_id, params, capabilities), trace, (), cut)
    RECORDS[check_id](trace, params, final=True, facts=facts)


@pytest.mark.parametrize("check_id", RECORDS)
@TOTAL
@given(case=mutated(), cut=st.integers(0, 100))
def test_a_checker_returns_a_verdict_on_a_mutated_reference_trace(
    check_id: str, case: tuple[Recorded, list[TraceEvent], list[HarnessFact]], cut: int,
) -> None:
    base, trace, facts = case
    verdicts(lambda: monitor_for(check_id, base.params, base.capabilities), trace, facts, cut)


# The shapes that raised, beside their controls --------------------------------------------


def _without(trace: Sequence[TraceEvent], lost: Callable[[TraceEvent], bool]
             ) -> list[TraceEvent]:
    """The trace as a mesh that lost the events `lost` picks reports it, renumbered."""
    kept = [event for event in trace if not lost(event)]
    return [dataclasses.replace(event, seq=index) for index, event in enumerate(kept)]


def _number(value: Any) -> Any:
    if isinstance(value, str) and value[:1] == "d" and value[1:].isdigit():
        return int(value[1:])
    return value


def _numbered(run: Recorded) -> Recorded:
    """The run as a mesh that numbers its deliveries reports it (JSON numbers: d7 is 7)."""
    trace = tuple(dataclasses.replace(e, delivery_id=_number(e.delivery_id),
                                      answers=_number(e.answers)) for e in run.trace)
    facts = tuple(dataclasses.replace(f, delivery_id=_number(f.delivery_id))
                  if hasattr(f, "delivery_id") else f for f in run.facts)
    return dataclasses.replace(run, trace=trace, facts=facts)


def _named(run: Recorded) -> Recorded:
    return run


SPELLINGS = [pytest.param(_named, id="named-ids"), pytest.param(_numbered, id="numbered-ids")]
Spelling = Callable[[Recorded], Recorded]


@pytest.mark.parametrize("spelled", SPELLINGS)
def test_inv6_a_trip_whose_post_was_lost_is_a_violation_naming_the_trip(
    spelled: Spelling,
) -> None:
    run = spelled(recorded("INV6", "storm"))
    found, monitor = run.verdict("INV6")
    assert found == [] and monitor.evidence[DROPS] > 0  # the control: the trace as it was
    tripped = next(e for e in run.trace if e.kind is K.BREAKER_TRIPPED).delivery_id
    lossy = _without(run.trace, lambda e: e.kind is K.POSTED and e.delivery_id == tripped)
    found, _ = run.verdict("INV6", lossy)
    assert found, "a trip of a post the trace never showed passed unseen"
    assert all(v.events[-1].delivery_id == tripped for v in found), found
    assert any(f"tripped on {tripped} " in v.message
               and v.events[-1].kind is K.BREAKER_TRIPPED for v in found), found


@pytest.mark.parametrize("spelled", SPELLINGS)
def test_inv7_an_answer_whose_landing_was_lost_is_a_violation_naming_the_answer(
    spelled: Spelling,
) -> None:
    run = spelled(recorded("INV7", "departed-owner"))
    found, monitor = run.verdict("INV7")
    assert found == [], found  # the control
    assert min(monitor.evidence[name] for name in (ANSWERED, LANDED, ACCEPTED)) > 0
    answer = next(e for e in run.trace if e.kind is K.FAILURE_EMITTED)
    lossy = _without(run.trace, lambda e: e.kind is K.POSTED
                     and e.delivery_id == answer.delivery_id)  # its ENQUEUED, HANDLED stay
    found, monitor = run.verdict("INV7", lossy)
    [violation] = found
    assert violation.message.startswith(f"the answer {answer.delivery_id} to {answer.answers} "
                                        "never reached its sender client")
    assert violation.events == (dataclasses.replace(answer, seq=violation.events[0].seq),)
    assert monitor.evidence[LANDED] == monitor.evidence[ACCEPTED] == 0


@pytest.mark.parametrize("spelled", SPELLINGS)
def test_inv7_an_answer_to_a_delivery_whose_events_were_lost_is_not_counted_answered(
    spelled: Spelling,
) -> None:
    run = spelled(recorded("INV7", "departed-owner"))
    _, control = run.verdict("INV7")
    answer = next(e for e in run.trace if e.kind is K.FAILURE_EMITTED)
    lossy = _without(run.trace, lambda e: e.delivery_id == answer.answers)
    found, monitor = run.verdict("INV7", lossy)
    assert found == [], found  # nothing the trace shows is wrong: the answer landed
    # An answer to a failure the trace never showed is no case of "answered once".
    assert monitor.evidence[ANSWERED] == control.evidence[ANSWERED] - 1
    assert monitor.evidence[LANDED] == control.evidence[LANDED]


@pytest.mark.parametrize("spelled", SPELLINGS)
def test_inv4_a_failed_attempt_whose_attempt_was_lost_is_a_violation_naming_it(
    spelled: Spelling,
) -> None:
    # It raised ValueError (negative shift count): the retry deadline read the backoff of
    # retry 0 once time moved past the failure.
    run = spelled(recorded("INV4", "one-rejection"))
    found, monitor = run.verdict("INV4")
    assert found == [] and monitor.evidence[DELAYS] == 1  # the control
    first = next(e for e in run.trace if e.kind is K.ATTEMPT)
    lossy = _without(run.trace, lambda e: e == first)
    [violation] = run.verdict("INV4", lossy)[0]
    assert f"but traced no ATTEMPT of {first.delivery_id} before it" in violation.message
    [failed] = violation.events
    assert failed.kind is K.ATTEMPT_FAILED and failed.delivery_id == first.delivery_id


def _aggregate_calls(count: int) -> tuple[list[TraceEvent], list[HarnessFact]]:
    """Aggregates armed at g (`count` timeout first, then one rejection first), and three
    grain calls there each timing out at the response timeout."""
    t, timeout = Trace(), DEFAULT_PARAMS.response_timeout_ms
    facts: list[HarnessFact] = [Injected(FaultKind.AGGREGATE_NEXT, "g", count, 0, 0, 0, True),
                                Injected(FaultKind.AGGREGATE_NEXT, "g", 1, 0, 0, 0, False)]
    for n, did in enumerate(("d1", "d2", "d3")):
        t.at(n * timeout).add(K.ATTEMPT, hub="grain", delivery_id=did, target="g", attempt=0)
        t.add(K.CALL_RECEIVED, hub="g", delivery_id=did, attempt=0)
        t.at((n + 1) * timeout).add(K.ATTEMPT_FAILED, hub="grain", delivery_id=did, attempt=0,
                                    error="AggregateError", timed_out=True)
        t.add(K.LEG_ENDED, delivery_id=did, leg_id=f"L{n}", leg_kind="route", reason="failed")
    return t.events, facts


@pytest.mark.parametrize(("count", "timeout_first", "rejection_first"),
                         [(2, 2, 1), (1, 1, 1), (2**40, 3, 0)])
def test_inv4_armed_aggregates_are_spent_in_order_however_many_were_armed(
    count: int, timeout_first: int, rejection_first: int,
) -> None:
    # A count of 2**40 raised MemoryError: the book held one entry per armed call. With
    # one of each armed, the third call meets no aggregate.
    trace, facts = _aggregate_calls(count)
    monitor = monitor_for("INV4")
    assert _run(monitor, trace, facts, final=True) == []
    assert monitor.evidence[AGGREGATE_TIMEOUT_FIRST] == timeout_first
    assert monitor.evidence[AGGREGATE_REJECTION_FIRST] == rejection_first
