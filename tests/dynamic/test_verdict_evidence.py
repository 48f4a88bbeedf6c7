"""Verdicts carry their evidence (SPEC §6): a run that never exercised an obligation is
"not exercised", never a pass; a trace that contradicts the harness facts is caught; a
deadline is decided the moment virtual time passes it.

Each adapter here is a correct or a deliberately broken reference mesh, some with a
trace that lies (`lying_meshes`); each check is paired with its control.
"""

from __future__ import annotations

from typing import Any

import pytest
from lying_meshes import (
    KeyWithoutIdentity,
    KeyWithoutIdentityHidingIt,
    NeverTimesOut,
    RenumberedStages,
    ResendsTimeouts,
    ResendsTimeoutsCallingThemRejections,
    RetriesLate,
)

from harness.invariant_items import evidence_lines
from harness.rows.build import row_of
from invariants.adapter import Fault, FaultKind, Route
from invariants.capabilities import DEFAULT_CAPABILITIES
from invariants.checks import CheckParams
from invariants.checks.inv4_no_resend_after_timeout import (
    AGGREGATE_REJECTION_FIRST,
    AGGREGATE_TIMEOUT_FIRST,
    SENT_ONCE,
    TERMINAL,
)
from invariants.checks.inv5_stop_holds import HELD
from invariants.checks.inv7_answer_once import BEHIND_RAISING, ONLY_ASKED, ROUNDTRIP
from invariants.dynamic.runner import run_invariant, run_program
from invariants.dynamic.seed_programs import SEED_PROGRAMS
from reference_impl.adapter import ReferenceAdapter, make_adapter


def test_a_mesh_numbering_its_stages_otherwise_is_not_exercised_with_the_cause() -> None:
    outcome = run_invariant("INV5", RenumberedStages, "ci")
    assert outcome.verdict == "not exercised", outcome.failure_text
    assert not outcome.passed
    assert outcome.evidence[HELD] == 0
    cause = outcome.unexercised[HELD]
    assert "no stop stage named Active was entered" in cause
    assert "set stop_stages in [tool.harness.params]" in cause
    assert outcome.failure_text is not None and cause in outcome.failure_text


def test_the_same_mesh_with_its_stage_numbers_as_params_passes() -> None:
    stages = {"Active": 120_000, "GrainDeactivation": 119_998}
    outcome = run_invariant("INV5", RenumberedStages, "ci",
                            params=CheckParams(stop_stages=stages))
    assert outcome.passed, outcome.failure_text
    assert all(count > 0 for count in outcome.evidence.values()), outcome.evidence


def test_a_mesh_that_never_times_out_is_not_exercised_on_inv4() -> None:
    outcome = run_invariant("INV4", NeverTimesOut, "ci")
    assert outcome.verdict == "not exercised", outcome.failure_text
    assert list(outcome.unexercised) == [
        SENT_ONCE, AGGREGATE_TIMEOUT_FIRST, AGGREGATE_REJECTION_FIRST,
        "timeout_next faults honoured", "aggregate_next faults honoured", TERMINAL]
    assert "no grain call timed out" in outcome.unexercised[SENT_ONCE]


def test_the_reference_exercises_inv4_fully() -> None:
    outcome = run_invariant("INV4", make_adapter, "ci")
    assert outcome.passed and outcome.unexercised == {}


def _seed(check_id: str, name: str) -> tuple[tuple[str, dict[str, object]], ...]:
    return tuple(SEED_PROGRAMS[check_id][name])


def test_a_timeout_reported_as_a_rejection_is_caught_by_the_ground_truth() -> None:
    outcome = run_program("INV4", ResendsTimeoutsCallingThemRejections,
                          _seed("INV4", "timeout"))
    assert outcome.verdict == "violation"
    messages = [v.message for v in outcome.violations]
    assert any(
        "the mesh reports d1's attempt 0 as RejectionError (not timed out), but the harness "
        "made that call time out (timeout_next at h0): that is a response timeout" in m
        for m in messages
    ), messages
    assert any("re-sent after a timed-out attempt" in m for m in messages), messages


def test_the_honest_pre_fix_mesh_is_caught_by_its_own_flag() -> None:
    # Control: the same defect with a truthful trace fails without any disagreement.
    outcome = run_program("INV4", ResendsTimeouts, _seed("INV4", "timeout"))
    assert outcome.verdict == "violation"
    assert not any("the mesh reports" in v.message for v in outcome.violations)


def test_a_fanout_whose_posted_identity_the_mesh_hides_is_caught() -> None:
    outcome = run_program("INV6", KeyWithoutIdentityHidingIt, _seed("INV6", "fanout"))
    assert outcome.verdict == "violation"
    messages = [v.message for v in outcome.violations]
    assert any("with payload identity None, but the harness posted it with node/" in m
               for m in messages), messages[:3]
    assert any("breaker dropped" in m and "identity node/" in m for m in messages), messages[:3]


def test_the_honest_tuple_key_breaker_is_caught_without_a_disagreement() -> None:
    outcome = run_program("INV6", KeyWithoutIdentity, _seed("INV6", "fanout"))
    assert outcome.verdict == "violation"
    assert not any("but the harness posted it" in v.message for v in outcome.violations)


def test_the_reference_reports_the_identities_it_was_given() -> None:
    assert run_program("INV6", make_adapter, _seed("INV6", "fanout")).passed


@pytest.mark.parametrize("program", ["rejection-retry"])
def test_a_late_retry_is_caught_though_one_advance_covers_its_deadline(program: str) -> None:
    # The program advances 30 s in one step: every late retry has come by the time the
    # step ends, so only a deadline decided as time passes it can see that it was late.
    outcome = run_program("INV4", RetriesLate, _seed("INV4", program))
    assert outcome.verdict == "violation", outcome.failure_text
    [first, *_] = outcome.violations
    assert "not re-sent after attempt 1 within its backoff of 250 ms" in first.message


def test_the_reference_retries_on_time_in_the_same_program() -> None:
    assert run_program("INV4", make_adapter, _seed("INV4", "rejection-retry")).passed


class _FirstSurfaceOnly(ReferenceAdapter):
    """The reference declaring only the protocol's first surface: no envelope round trip
    (its method hidden, or the protocol would show it), no aggregate faults, no raising
    handlers."""

    capabilities = DEFAULT_CAPABILITIES
    set_envelope_roundtrip = None  # type: ignore[assignment]


def test_obligations_of_an_undeclared_optional_capability_are_not_applicable() -> None:
    inv4 = run_invariant("INV4", _FirstSurfaceOnly, "ci")
    assert inv4.passed, inv4.failure_text
    assert inv4.inapplicable == {
        AGGREGATE_TIMEOUT_FIRST: "the adapter declares no aggregate faults",
        AGGREGATE_REJECTION_FIRST: "the adapter declares no aggregate faults",
        "aggregate_next faults honoured": "the adapter declares no aggregate faults",
        "delivery effects applied at most once": "the adapter declares no at least once",
    }
    assert inv4.evidence[AGGREGATE_TIMEOUT_FIRST] == inv4.evidence[AGGREGATE_REJECTION_FIRST] == 0
    inv7 = run_invariant("INV7", _FirstSurfaceOnly, "ci")
    assert inv7.passed, inv7.failure_text
    assert inv7.inapplicable == {
        ROUNDTRIP: "the adapter declares no envelope roundtrip",
        BEHIND_RAISING: "the adapter declares no raising handlers",
        ONLY_ASKED: "the adapter declares no raising handlers",
    }
    assert inv7.evidence[ROUNDTRIP] == 0
    shown = evidence_lines(row_of(inv7))
    assert "not applicable: the adapter declares no envelope roundtrip" in shown


def test_the_reference_exercises_the_optional_obligations() -> None:
    inv4 = run_program("INV4", make_adapter, SEED_PROGRAMS["INV4"]["aggregate"])
    assert inv4.passed, inv4.failure_text
    assert inv4.evidence[AGGREGATE_TIMEOUT_FIRST] == inv4.evidence[AGGREGATE_REJECTION_FIRST] == 1
    inv7 = run_program("INV7", make_adapter, SEED_PROGRAMS["INV7"]["answer-once-roundtrip"])
    assert inv7.passed, inv7.failure_text
    assert inv7.evidence[ROUNDTRIP] > 0
    assert run_program("INV7", make_adapter, SEED_PROGRAMS["INV7"]["answer-once"]).evidence[
        ROUNDTRIP] == 0


def test_a_declared_round_trip_without_its_method_is_a_clear_error() -> None:
    class Claims(ReferenceAdapter):
        set_envelope_roundtrip = None  # type: ignore[assignment]

    outcome = run_program("INV7", Claims, SEED_PROGRAMS["INV7"]["answer-once-roundtrip"])
    assert outcome.verdict == "error"
    assert "declares the envelope_roundtrip capability but has no " \
        "set_envelope_roundtrip(on) method" in (outcome.failure_text or "")


class _HonoursEveryOtherTimeout(ReferenceAdapter):
    """Its fault injector drops every second TIMEOUT_NEXT it is given."""

    def __init__(self, chooser: Any) -> None:
        super().__init__(chooser)
        self.timeouts = 0

    def inject(self, fault: Fault) -> None:
        if fault.kind is FaultKind.TIMEOUT_NEXT:
            self.timeouts += 1
            if self.timeouts % 2 == 0:
                return
        super().inject(fault)


def test_a_fault_honoured_only_sometimes_is_a_violation() -> None:
    program = (
        ("init", {"watermarks": (None, None, None), "swarm": {}, "scenario": None}),
        ("timeout", {"to": "h0", "count": 1}),
        ("user", {"sender": "client", "to": "h0", "route": Route.GRAIN, "count": 1}),
        ("advance", {"ms": 31_000, "schedule": []}),
        ("timeout", {"to": "h1", "count": 1}),
        ("user", {"sender": "client", "to": "h1", "route": Route.GRAIN, "count": 1}),
    )
    outcome = run_program("INV4", _HonoursEveryOtherTimeout, program)
    assert outcome.verdict == "violation", outcome.failure_text
    assert any("the harness armed timeout_next at h1, but d3's call ran at the callee" in
               v.message and "the fault was not honoured" in v.message
               for v in outcome.violations)
    assert run_program("INV4", make_adapter, program).passed


class _FrozenClock(ReferenceAdapter):
    def advance(self, ms: int) -> None:
        super().advance(ms // 2)


def test_a_clock_that_does_not_move_as_asked_stops_the_run() -> None:
    program = (
        ("init", {"watermarks": (None, None, None), "swarm": {}, "scenario": None}),
        ("advance", {"ms": 1_000, "schedule": []}),
    )
    outcome = run_program("INV1", _FrozenClock, program)
    assert outcome.verdict == "error"
    assert "ClockError: _FrozenClock.advance(1000) moved virtual time from 0 ms to 500 ms, " \
        "not to 1000 ms" in (outcome.failure_text or "")
