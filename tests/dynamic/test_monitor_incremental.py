"""A checker fed a trace in pieces (as the state machines feed it after every step) finds
exactly what it finds on the whole trace at once."""

from collections.abc import Sequence
from dataclasses import replace
from functools import cache
from types import MappingProxyType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mutant_controls import CONTROLS, mutant_factory

from invariants.checks import CHECK_IDS, DEFAULT_PARAMS, check, monitor_for
from invariants.checks.monitor import Monitor
from invariants.dynamic.plans import machine_class
from invariants.dynamic.report import InvariantViolated
from invariants.dynamic.seed_programs import SEED_PROGRAMS, resolved
from invariants.trace import EventKind, TraceEvent, custom_event


@cache
def _violating_trace(check_id: str) -> Sequence[TraceEvent]:
    """The trace of the first seed program one of the check's mutant controls fails, as the
    trace alone shows it (without the classes the driver declares: M8's INV1 needs them)."""
    for mutant_id in (m for c, m in CONTROLS if c == check_id):
        for program in SEED_PROGRAMS[check_id].values():
            machine = machine_class(check_id, mutant_factory(mutant_id))()
            try:
                for step, arguments in resolved(program, DEFAULT_PARAMS):
                    getattr(machine, step)(**arguments)
                machine.mesh.run_until_idle(10 * 60 * 1000)
            except InvariantViolated:
                pass
            trace = machine.mesh.trace()
            if check(check_id, trace, final=True):
                return tuple(trace)
    raise AssertionError(f"no seed program of {check_id} shows a violation on its own")


@pytest.mark.parametrize("check_id", CHECK_IDS)
@settings(max_examples=25, deadline=None, derandomize=True, database=None)
@given(data=st.data())
def test_feeding_in_pieces_finds_the_same_violations(check_id: str, data: st.DataObject) -> None:
    trace = _violating_trace(check_id)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(trace)), max_size=6), label="cuts"))
    monitor = monitor_for(check_id)
    start = 0
    for cut in [*cuts, len(trace)]:
        monitor.feed(trace[start:cut])
        start = max(start, cut)
    whole = check(check_id, trace, final=True)
    assert whole, "the trace must show a violation for the comparison to mean anything"
    assert monitor.violations(final=True) == whole


def _with_custom_events(trace: Sequence[TraceEvent]) -> list[TraceEvent]:
    """`trace` with a mesh's own event after each event, at its instant and hub."""
    mixed: list[TraceEvent] = []
    for event in trace:
        mixed.append(replace(event, seq=len(mixed)))
        mixed.append(custom_event(len(mixed), event.time_ms, "team.noted", hub=event.hub))
    return mixed


@pytest.mark.parametrize("check_id", CHECK_IDS)
def test_a_built_in_checker_is_not_fed_the_mesh_s_own_events(check_id: str) -> None:
    """The built-in checkers read no custom events, so they are never fed them: a trace
    full of them gives the same verdicts and counts as the trace without."""
    trace = _violating_trace(check_id)
    plain, mixed = monitor_for(check_id), monitor_for(check_id)
    assert not plain.reads_custom_events
    plain.feed(trace)
    mixed.feed(_with_custom_events(trace))
    found = [v.message for v in plain.violations(final=True)]
    assert found and found == [v.message for v in mixed.violations(final=True)]
    assert plain.evidence == mixed.evidence and plain.context == mixed.context


class _Noting(Monitor):
    check_id = "NOTE1"
    title = "counts the mesh's own events"
    obligations = MappingProxyType({"noted": "the mesh noted nothing"})

    def observe(self, event: TraceEvent) -> None:
        if event.kind is EventKind.CUSTOM:
            self.exercised("noted")


def test_a_team_checker_is_fed_them_and_one_that_declares_it_reads_none_is_not() -> None:
    mixed = _with_custom_events(_violating_trace("INV1"))
    reading = _Noting()
    reading.feed(mixed)
    assert reading.evidence["noted"] == len(mixed) // 2
    deaf = type("_Deaf", (_Noting,), {"reads_custom_events": False})()
    deaf.feed(mixed)  # the control: the flag is what keeps them away
    assert deaf.evidence["noted"] == 0
