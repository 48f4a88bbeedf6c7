"""A checker fed a trace in pieces (as the state machines feed it after every step) finds
exactly what it finds on the whole trace at once."""

from collections.abc import Sequence
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mutant_controls import CONTROLS, mutant_factory

from invariants.checks import CHECK_IDS, DEFAULT_PARAMS, check, monitor_for
from invariants.dynamic.plans import machine_class
from invariants.dynamic.report import InvariantViolated
from invariants.dynamic.seed_programs import SEED_PROGRAMS, resolved
from invariants.trace import TraceEvent


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
