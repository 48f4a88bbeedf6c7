"""The temporal combinators a team writes its invariants with: each one passes a trace
that keeps it (with its evidence counted exactly) and flags one that breaks it, deadlines
are in time up to and including their bound and stay broken once passed, and a bad
definition is refused at once with one line naming the obligation."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest
from hypothesis import Phase, settings

from invariants.checks import CHECKS
from invariants.checks.monitor import Check, Monitor, run_monitor
from invariants.checks.temporal import (
    Obligation,
    always,
    at_most,
    by,
    describe,
    eventually,
    happened,
    invariant,
    leads_to,
    never,
)
from invariants.dynamic.profiles import PROFILES
from invariants.dynamic.runner import run_invariant
from invariants.trace import EventKind, TraceEvent, custom_event
from reference_impl.adapter import make_adapter

STARTED = "aiomesh.turn_started"
ENDED = "aiomesh.turn_ended"


def ev(seq: int, time_ms: int, kind: EventKind, **fields: object) -> TraceEvent:
    return TraceEvent(seq, time_ms, kind, **fields)  # type: ignore[arg-type]


def started(seq: int, time_ms: int, hub: str = "h1", **data: str | int) -> TraceEvent:
    return custom_event(seq, time_ms, STARTED, hub=hub, **data)


def ended(seq: int, time_ms: int, hub: str = "h1", **data: str | int) -> TraceEvent:
    return custom_event(seq, time_ms, ENDED, hub=hub, **data)


def judged(monitor_class: type[Monitor], trace: Sequence[TraceEvent], *,
           final: bool = True, now_ms: int | None = None) -> tuple[list[str], dict[str, int]]:
    """The violations' texts and the evidence of one fresh monitor fed `trace`."""
    monitor = monitor_class()
    found = run_monitor(monitor, trace, final=final, now_ms=now_ms)
    return [v.message for v in found], dict(monitor.evidence)


def texts(monitor_class: type[Monitor], trace: Sequence[TraceEvent], **kw: object) -> list[str]:
    return [v.message for v in Check(monitor_class)(trace, **kw)]  # type: ignore[arg-type]


# happened, by, describe ------------------------------------------------------------------


def test_happened_matches_a_kind_and_its_fields() -> None:
    handled = happened(EventKind.HANDLED, hub="h1")
    assert handled(ev(0, 0, EventKind.HANDLED, hub="h1", delivery_id="d1"))
    assert not handled(ev(0, 0, EventKind.HANDLED, hub="h2"))
    assert not handled(ev(0, 0, EventKind.ENQUEUED, hub="h1"))
    assert not handled(started(0, 0))


def test_happened_matches_a_custom_name_and_its_data() -> None:
    turn = happened(STARTED, hub="h1", turn=3)
    assert turn(started(0, 0, turn=3))
    assert not turn(started(0, 0, turn=4))
    assert not turn(started(0, 0, hub="h2", turn=3))
    assert not turn(ended(0, 0, turn=3))
    assert not turn(ev(0, 0, EventKind.HANDLED, hub="h1"))
    # A data field named like a TraceEvent field a custom event leaves unset is its data.
    assert happened(STARTED, target="h9")(started(0, 0, target="h9"))
    assert happened(EventKind.CUSTOM, turn=3)(ended(0, 0, turn=3))
    assert repr(turn) == "happened('aiomesh.turn_started', hub='h1', turn=3)"
    assert repr(happened(EventKind.HANDLED)) == "happened(EventKind.HANDLED)"


def test_by_reads_a_field_or_data_and_several_as_a_tuple() -> None:
    event = started(4, 10, hub="h2", turn=7, target="h3")
    assert by("hub")(event) == "h2"
    assert by("turn")(event) == 7
    assert by("target")(event) == "h3"
    assert by("hub", "turn", "missing")(event) == ("h2", 7, None)
    assert by("delivery_id")(ev(0, 0, EventKind.HANDLED, delivery_id="d1")) == "d1"


def test_describe_names_kind_delivery_and_hub() -> None:
    assert describe(started(0, 0)) == f"custom {STARTED} at h1"
    assert describe(ev(0, 0, EventKind.HANDLED, delivery_id="d1", hub="h2")) == "handled d1 at h2"
    assert describe(ev(0, 0, EventKind.STOP_COMPLETED)) == "stop_completed"


# always, never ---------------------------------------------------------------------------

NUMBERED = always("turns are numbered", lambda e: e.value("turn") is not None,
                   on=happened(STARTED))
QUIET = never("no failure answered at h1", happened(EventKind.FAILURE_EMITTED, hub="h1"),
              on=happened(EventKind.FAILURE_EMITTED))
SAFETY = invariant("INV80", "turns numbered, no failure at h1", NUMBERED, QUIET)


def test_always_and_never_count_each_case_where_they_hold() -> None:
    trace = [started(0, 0, turn=1), ended(1, 0), started(2, 5, turn=2),
             ev(3, 6, EventKind.FAILURE_EMITTED, hub="h2", answers="d1")]
    assert judged(SAFETY, trace) == ([], {"turns are numbered": 2, "no failure answered at h1": 1})


def test_always_flags_the_event_where_it_does_not_hold() -> None:
    trace = [started(0, 0, turn=1), started(1, 3)]
    found, evidence = judged(SAFETY, trace, final=False)
    assert found == [f"turns are numbered: seq 1 at 3 ms (custom {STARTED} at h1) breaks it"]
    assert evidence["turns are numbered"] == 1


def test_never_flags_the_event_that_happened() -> None:
    trace = [ev(0, 2, EventKind.FAILURE_EMITTED, hub="h1", delivery_id="f1", answers="d1")]
    assert texts(SAFETY, trace) == [
        "no failure answered at h1: seq 0 at 2 ms (failure_emitted f1 at h1) breaks it"]


def test_every_event_is_a_case_by_default() -> None:
    every = invariant("INV80", "hubs named", always("events have a hub", lambda e: e.hub != ""))
    assert judged(every, [started(0, 0), ended(1, 0), started(2, 1)])[1] == {
        "events have a hub": 3}


# eventually ------------------------------------------------------------------------------

SOME_TURN = invariant("INV81", "a turn ends", eventually("a turn ends", happened(ENDED)))
PROMPT_TURN = invariant("INV81", "a turn ends soon",
                        eventually("a turn ends soon", happened(ENDED), within_ms=10))


def test_eventually_is_one_case_however_often_it_matches() -> None:
    trace = [started(0, 0), ended(1, 3), ended(2, 4)]
    assert judged(SOME_TURN, trace) == ([], {"a turn ends": 1})


def test_eventually_is_judged_only_once_the_run_is_over() -> None:
    trace = [started(0, 0), started(1, 700)]
    assert texts(SOME_TURN, trace) == []
    assert texts(SOME_TURN, trace, final=True) == [
        "a turn ends: the run went quiet at t=700 ms without a match"]


def test_eventually_within_is_in_time_up_to_its_deadline() -> None:
    assert judged(PROMPT_TURN, [started(0, 5), ended(1, 15)]) == (
        [], {"a turn ends soon": 1})
    late = [started(0, 5), ended(1, 16)]
    expected = [f"a turn ends soon: no match within 10 ms of the run's first event, seq 0 at "
                f"5 ms (custom {STARTED} at h1)"]
    # Latched: the match after the deadline leaves the violation, without waiting for the end.
    assert judged(PROMPT_TURN, late, final=False) == (expected, {"a turn ends soon": 0})
    assert texts(PROMPT_TURN, late, final=True) == expected


def test_eventually_within_flags_as_soon_as_time_passes_the_deadline() -> None:
    trace = [started(0, 5)]
    assert texts(PROMPT_TURN, trace, now_ms=15) == []
    assert len(texts(PROMPT_TURN, trace, now_ms=16)) == 1
    # Quiet before the deadline: still owed at the end.
    assert texts(PROMPT_TURN, trace, final=True) == [
        "a turn ends soon: the run went quiet at t=5 ms without a match"]


# leads_to --------------------------------------------------------------------------------

INSTANT = "a hub's turn ends in its instant"
TURNS = invariant("INV82", "turns end", leads_to(
    INSTANT, happened(STARTED), happened(ENDED), within_ms=0, key=by("hub")))
UNKEYED = invariant("INV82", "turns end", leads_to(
    INSTANT, happened(STARTED), happened(ENDED), within_ms=5))
EVENTUALLY_ENDS = invariant("INV82", "turns end", leads_to(
    "a turn ends", happened(STARTED), happened(ENDED)))


def test_leads_to_discharges_every_pending_case_of_the_key() -> None:
    trace = [started(0, 0, hub="h1"), started(1, 0, hub="h1"), started(2, 0, hub="h2"),
             ended(3, 0, hub="h2"), ended(4, 0, hub="h1")]
    assert judged(TURNS, trace) == ([], {INSTANT: 3})


def test_leads_to_a_match_exactly_at_the_deadline_is_in_time() -> None:
    assert judged(UNKEYED, [started(0, 1000), ended(1, 1005)]) == ([], {INSTANT: 1})


def test_leads_to_a_match_a_millisecond_late_is_a_violation_that_stays() -> None:
    trace = [started(12, 1000), ended(13, 1006)]
    expected = [f"{INSTANT}: seq 12 at 1000 ms (custom {STARTED} at h1) was not followed by "
                "a match within 5 ms"]
    assert judged(UNKEYED, trace, final=False) == (expected, {INSTANT: 0})
    assert texts(UNKEYED, trace, final=True) == expected


def test_leads_to_flags_when_time_passes_the_deadline_with_the_case_pending() -> None:
    trace = [started(12, 1000), ev(13, 1000, EventKind.HANDLED)]
    assert texts(TURNS, trace, now_ms=1000) == []
    assert texts(TURNS, trace, now_ms=1001) == [
        f"{INSTANT}: seq 12 at 1000 ms (custom {STARTED} at h1) was not followed by a match "
        "for key 'h1' within 0 ms"]


def test_leads_to_a_match_of_another_key_does_not_discharge() -> None:
    trace = [started(0, 0, hub="h1"), ended(1, 0, hub="h2")]
    assert judged(TURNS, trace) == ([
        f"{INSTANT}: seq 0 at 0 ms (custom {STARTED} at h1) was not followed by a match for "
        "key 'h1': the run went quiet at t=0 ms without one"], {INSTANT: 0})


def test_leads_to_needs_a_later_match() -> None:
    # The answer before the trigger discharges nothing; one event matching both answers
    # the cases before it, then opens its own.
    both = invariant("INV82", "chain", leads_to("chained", happened(STARTED),
                                               happened(STARTED, turn=2)))
    trace = [started(0, 0, turn=2), started(1, 1, turn=2)]
    assert judged(both, trace) == ([
        f"chained: seq 1 at 1 ms (custom {STARTED} at h1) was not followed by a match: the "
        "run went quiet at t=1 ms without one"], {"chained": 1})
    assert len(texts(EVENTUALLY_ENDS, [ended(0, 0), started(1, 1)], final=True)) == 1


def test_leads_to_without_a_deadline_is_judged_only_once_the_run_is_over() -> None:
    trace = [started(0, 0), started(1, 9000)]
    assert texts(EVENTUALLY_ENDS, trace) == []
    assert texts(EVENTUALLY_ENDS, trace, final=True) == [
        f"a turn ends: seq {seq} at {t} ms (custom {STARTED} at h1) was not followed by a "
        "match: the run went quiet at t=9000 ms without one" for seq, t in ((0, 0), (1, 9000))]


def test_two_obligations_with_deadlines_opened_by_one_event_are_both_reported() -> None:
    twice = invariant("INV83", "two answers", leads_to("ended", happened(STARTED),
                                                       happened(ENDED), within_ms=1),
                      leads_to("logged", happened(STARTED), happened("aiomesh.logged"),
                               within_ms=1))
    found = texts(twice, [started(0, 0), ev(1, 2, EventKind.HANDLED)])
    assert [text.split(":")[0] for text in found] == ["ended", "logged"]


def test_leads_to_keeps_many_cases_apart() -> None:
    # Cases of many keys, opened 1 ms apart and answered together, last one first.
    trace = [started(i, i, hub=f"h{i}") for i in range(200)]
    trace += [ended(400 - i, 200, hub=f"h{i}") for i in reversed(range(200))]

    def turns(within_ms: int) -> type[Monitor]:
        return invariant("INV82", "turns end", leads_to(
            INSTANT, happened(STARTED), happened(ENDED), within_ms=within_ms, key=by("hub")))

    assert judged(turns(200), trace) == ([], {INSTANT: 200})
    # Within 198 ms: h0's deadline (198) and h1's (199) pass as time reaches 200.
    found, evidence = judged(turns(198), trace)
    assert [text.split(" (")[0] for text in found] == [
        f"{INSTANT}: seq {i} at {i} ms" for i in (0, 1)]
    assert evidence == {INSTANT: 198}


# at_most ---------------------------------------------------------------------------------

TWICE = invariant("INV84", "few retries", at_most("at most two retries", 2, happened(
    EventKind.ATTEMPT), key=by("delivery_id")))
RATE = invariant("INV84", "a slow breaker", at_most(
    "one trip per 100 ms", 1, happened(EventKind.BREAKER_TRIPPED), per_ms=100))


def attempt(seq: int, time_ms: int, did: str) -> TraceEvent:
    return ev(seq, time_ms, EventKind.ATTEMPT, delivery_id=did, hub="r")


def test_at_most_counts_per_key_over_the_run() -> None:
    trace = [attempt(0, 0, "d1"), attempt(1, 0, "d2"), attempt(2, 5000, "d1"),
             attempt(3, 5000, "d2")]
    assert judged(TWICE, trace) == ([], {"at most two retries": 4})


def test_at_most_flags_the_one_too_many_naming_them() -> None:
    trace = [attempt(0, 0, "d1"), attempt(1, 1, "d2"), attempt(2, 2, "d1"),
             attempt(3, 9000, "d1")]
    found = Check(TWICE)(trace)
    assert [v.message for v in found] == [
        "at most two retries: seq 3 at 9000 ms (attempt d1 at r) is match 3 in the run for "
        "key 'd1', more than 2 (after seq 0 at 0 ms, seq 2 at 2 ms)"]
    assert found[0].seqs == (0, 2, 3)


def trip(seq: int, time_ms: int) -> TraceEvent:
    return ev(seq, time_ms, EventKind.BREAKER_TRIPPED, hub="h1")


def test_at_most_window_holds_events_at_most_per_ms_apart() -> None:
    assert judged(RATE, [trip(0, 0), trip(1, 101), trip(2, 202)]) == (
        [], {"one trip per 100 ms": 3})
    found, evidence = judged(RATE, [trip(0, 0), trip(1, 101), trip(2, 201)])
    assert found == ["one trip per 100 ms: seq 2 at 201 ms (breaker_tripped at h1) is match 2 "
                     "within 100 ms, more than 1 (after seq 1 at 101 ms)"]
    assert evidence == {"one trip per 100 ms": 2}


def test_at_most_zero_flags_every_match_alone() -> None:
    none = invariant("INV84", "no trips", at_most("no trip", 0, happened(
        EventKind.BREAKER_TRIPPED)))
    found = Check(none)([trip(0, 0), trip(1, 1)])
    assert [v.seqs for v in found] == [(0,), (1,)]
    assert found[0].message == "no trip: seq 0 at 0 ms (breaker_tripped at h1) is match 1 in " \
                               "the run, more than 0"


# The invariant ---------------------------------------------------------------------------


def test_an_invariant_is_a_monitor_named_by_its_id() -> None:
    assert issubclass(TURNS, Monitor)
    assert (TURNS.__name__, TURNS.__qualname__, TURNS.check_id, TURNS.title) == (
        "INV82", "INV82", "INV82", "turns end")
    assert dict(TURNS.obligations) == {INSTANT: TURNS.temporal[0].cause}  # type: ignore[attr-defined]
    assert "aiomesh.turn_started" in TURNS.temporal[0].cause  # type: ignore[attr-defined]
    assert TURNS().evidence == {INSTANT: 0}


def test_custom_causes_are_kept() -> None:
    made = invariant("INV85", "x", never("nothing", happened(ENDED), cause="no turn ended"))
    assert dict(made.obligations) == {"nothing": "no turn ended"}


def test_a_monitor_fed_in_pieces_finds_what_the_whole_trace_shows() -> None:
    trace = [started(0, 0, hub="h1"), started(1, 0, hub="h2"), ended(2, 0, hub="h2"),
             ended(3, 4, hub="h1"), started(4, 4, hub="h3"), ev(5, 9, EventKind.HANDLED)]
    whole = Check(TURNS)(trace, final=True)
    assert len(whole) == 2
    for cut in range(len(trace) + 1):
        monitor = TURNS()
        monitor.feed(trace[:cut])
        monitor.feed(trace[cut:])
        assert monitor.violations(final=True) == whole


def test_a_predicate_that_raises_propagates() -> None:
    def broken(event: TraceEvent) -> bool:
        raise KeyError("the team's bug")

    made = invariant("INV86", "raises", always("raises", broken))
    with pytest.raises(KeyError, match="the team's bug"):
        Check(made)([started(0, 0)])
    keyed = invariant("INV86", "raises", leads_to("keyed", happened(STARTED),
                                                  happened(ENDED), key=broken))
    with pytest.raises(KeyError, match="the team's bug"):
        Check(keyed)([started(0, 0)])


# Definition-time errors ------------------------------------------------------------------

P = happened(STARTED)


def untyped(value: object) -> Any:
    """A value of the wrong type, as code without a type checker passes it."""
    return value


@pytest.mark.parametrize("define, error, text", [
    (lambda: always("", P), ValueError, r"always\(''\): an obligation's name is not empty"),
    (lambda: never("  ", P), ValueError, "name is not empty"),
    (lambda: always(untyped(3), P), TypeError, r"always\(3\): an obligation's name is a str"),
    (lambda: always("a", untyped(3)), TypeError, r"always\('a'\): `holds` is not callable"),
    (lambda: never("a", P, on=untyped("x")), TypeError, r"never\('a'\): `on` is not callable"),
    (lambda: eventually("e", untyped(None)), TypeError, r"eventually\('e'\): `p` is not callable"),
    (lambda: eventually("e", P, within_ms=-1), ValueError,
     r"eventually\('e'\): `within_ms` is -1; it must be >= 0"),
    (lambda: eventually("e", P, within_ms=untyped(1.5)), TypeError, "`within_ms` is an int"),
    (lambda: leads_to("l", P, untyped("q")), TypeError, r"leads_to\('l'\): `q` is not callable"),
    (lambda: leads_to("l", P, P, within_ms=-5), ValueError, "`within_ms` is -5"),
    (lambda: leads_to("l", P, P, key=untyped("hub")), TypeError, "`key` is not callable"),
    (lambda: at_most("m", -1, P), ValueError, r"at_most\('m'\): `n` is -1"),
    (lambda: at_most("m", True, P), TypeError, "`n` is an int"),
    (lambda: at_most("m", 1, P, per_ms=-1), ValueError, "`per_ms` is -1"),
    (lambda: always("a", P, cause=""), TypeError, "`cause` is a non-empty str"),
    (lambda: happened("handled"), ValueError,
     r"happened\('handled'\): not a custom event name .*EventKind.HANDLED"),
    (lambda: happened("harness.tick"), ValueError, "the harness's own"),
    (lambda: happened(untyped(3)), TypeError, "expected an EventKind or a custom event name"),
    (lambda: happened(EventKind.HANDLED, turn=1), ValueError,
     r"a handled event has no field 'turn'"),
    (lambda: happened(STARTED, kind="x"), ValueError, "'kind' is not compared as a field"),
    (lambda: by(), ValueError, "name at least one field"),
    (lambda: by("a b"), ValueError, "is an identifier"),
    (lambda: by(untyped(1)), TypeError, "a field name is a str"),
    (lambda: invariant("INV87", "t"), ValueError, r"invariant\('INV87'\): no obligations"),
    (lambda: invariant("", "t", always("a", P)), ValueError, "the check id is empty"),
    (lambda: invariant(untyped(None), "t", always("a", P)), TypeError, "the check id is a str"),
    (lambda: invariant("INV87", "", always("a", P)), ValueError, "the title is empty"),
    (lambda: invariant("INV87", "t", always("a", P), never("a", P)), ValueError,
     r"invariant\('INV87'\): two obligations are named 'a'"),
    (lambda: invariant("INV87", "t", untyped([always("a", P)])), TypeError,
     r"obligation 1 is list .*not an Obligation"),
    (lambda: invariant("INV87", "t", always("a", P), untyped(P)), TypeError,
     "obligation 2 is _Happened"),
])
def test_a_bad_definition_is_refused_in_one_line(
        define: Callable[[], object], error: type[Exception], text: str) -> None:
    with pytest.raises(error, match=text) as raised:
        define()
    assert "\n" not in str(raised.value)


def test_an_obligation_is_a_frozen_record() -> None:
    obligation = always("a", P)
    assert isinstance(obligation, Obligation)
    with pytest.raises(AttributeError):
        obligation.name = "b"  # type: ignore[misc]


# End to end ------------------------------------------------------------------------------

# Light: a few examples, none shrunk (the verdict is the point here, not the smallest case).
LIGHT = settings(PROFILES["ci"], max_examples=10, phases=(Phase.explicit, Phase.generate))


def test_a_made_invariant_drives_and_judges_a_run(monkeypatch: pytest.MonkeyPatch) -> None:
    answered = invariant("INV92", "no failure answered",
                         never("no failure answered", happened(EventKind.FAILURE_EMITTED)))
    handled = invariant("INV93", "a handled delivery has its hub",
                        always("handled at a hub", lambda e: e.hub is not None,
                               on=happened(EventKind.HANDLED)))
    monkeypatch.setitem(CHECKS, "INV92", answered)
    monkeypatch.setitem(CHECKS, "INV93", handled)
    # Deliveries to missing targets are answered with failures: the obligation is broken.
    flagged = run_invariant("INV92", make_adapter, LIGHT, bystanders=False)
    assert flagged.verdict == "violation", flagged.failure_text
    assert {v.check_id for v in flagged.violations} == {"INV92"}
    assert "no failure answered: seq" in (flagged.failure_text or "")
    quiet = run_invariant("INV93", make_adapter, LIGHT, bystanders=False)
    assert quiet.verdict == "pass", quiet.failure_text
    assert quiet.evidence["handled at a hub"] > 0
