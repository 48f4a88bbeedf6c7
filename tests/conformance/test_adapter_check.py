"""The adapter conformance check: the reference adapter conforms, and an adapter breaking
any one convention is flagged on that convention, with the event and the doc section."""

from __future__ import annotations

import sys
import threading
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest
from lying_adapters import (
    edit_first,
    fifo_for_pairs,
    grain_failures_unanswered,
    grain_leg_ends_at_dispatch,
    hard_stop_by_default,
    ignores_breaker_threshold,
    ignores_the_answer,
    ignores_the_give_up,
    lying,
    monolith_through_grain,
    never_asks,
    no_grain_router,
    plus_custom,
    spends_at_attempt,
    time_goes_back,
    two_retries_by_default,
    unpackaged,
    without_all,
    without_first,
    zero_count_arms_one,
)

from harness.cli import main
from invariants.adapter import AdapterFactory, FaultKind
from invariants.adapter_calls import MeshHung
from invariants.conformance.programs import conformance
from invariants.mutants.build import build_mutant
from invariants.mutants.registry import find_mutant
from invariants.trace import EventKind, TraceEvent
from reference_impl.adapter import ReferenceAdapter, make_adapter


def _broken(factory: AdapterFactory) -> dict[str, list[str]]:
    _, results = conformance(factory)
    found: dict[str, list[str]] = {}
    for result in results:
        for problem in result.broken:
            found.setdefault(problem.convention, []).append(problem.line(result.program))
    return found


def test_the_reference_adapter_conforms() -> None:
    _, results = conformance(make_adapter)
    assert [r.program for r in results] == [
        "intake", "schedule", "grain", "fault-order", "zero-count", "subscribe", "stop",
        "give-up",
        "aggregate", "roundtrip", "raising", "breaker"]
    assert all(r.events > 0 for r in results)
    assert _broken(make_adapter) == {}


@pytest.mark.parametrize(
    ("convention", "adapter", "fragment"),
    [
        ("event-order", lying(time_goes_back), "time goes backwards"),
        ("fields", lying(edit_first(EventKind.POSTED, message_class="user")),
         "message_class is 'user' (str), not a MessageClass"),
        ("fields", lying(edit_first(EventKind.ATTEMPT, attempt=True)),
         "attempt is True (bool), not an int"),
        ("fields", lying(edit_first(EventKind.POSTED, custom="tiny.posted")),
         "custom and data belong to a CUSTOM event only"),
        ("fields", lying(plus_custom("Mesh.Turn")), "custom event 'Mesh.Turn': expected "
         "'namespace.kind'"),
        ("fields", lying(plus_custom("tiny.turn", hubs=["a"])),
         "field 'hubs' is a list; a field is a str, int, float, bool or None"),
        ("intake", lying(without_first(EventKind.ENQUEUED)), "got no intake outcome"),
        ("intake", lying(without_all(EventKind.ENQUEUED)), "never ENQUEUED"),
        ("legs", lying(without_first(EventKind.LEG_ENDED)), "never ended"),
        ("legs", lying(edit_first(EventKind.LEG_STARTED, leg_id=None)), "without a leg_id"),
        ("grain-calls", lying(without_first(EventKind.ATTEMPT)), "has no ATTEMPT before it"),
        ("grain-calls", lying(edit_first(EventKind.ATTEMPT_FAILED, error="CalleeRefused")),
         "error 'CalleeRefused'"),
        ("grain-calls", lying(edit_first(EventKind.ATTEMPT_FAILED, timed_out=None)),
         "timed_out must be true or false"),
        ("subscribe", lying(without_all(EventKind.SUBSCRIBE_TERMINATED)),
         "never answered nor terminated"),
        ("posts", lying(edit_first(EventKind.POSTED, sender="someone-else")),
         "posted with sender='client'"),
        ("posts", lying(edit_first(EventKind.POSTED, diagnostic_key="node/2")),
         "diagnostic_key"),
        ("posts", monolith_through_grain, "d1 was posted by the monolith route, but the mesh "
         "made a grain call of it"),
        ("posts", lying(unpackaged), "was posted by the monolith route, which packages it, "
         "but arrived at alpha with packaged=False"),
        ("capabilities", lying(without_all(EventKind.ATTEMPT)), "made no ATTEMPT"),
        ("stop", lying(without_all(EventKind.STOP_COMPLETED)), "emitted no STOP_COMPLETED"),
        ("chooser", never_asks, "never asked its Chooser"),
        ("chooser", ignores_the_answer, "does not follow the answer"),
        ("chooser", fifo_for_pairs, "two deliveries posted in one instant to two hubs, and "
         "the mesh never asked its Chooser"),
        ("grain-calls", spends_at_attempt(FaultKind.TIMEOUT_NEXT),
         "the timeout_next is spent by the first call that reaches the callee"),
        ("grain-calls", spends_at_attempt(FaultKind.AGGREGATE_NEXT),
         "the aggregate_next is spent by the first call that reaches the callee"),
        ("stop", ignores_the_give_up, "held 4001 ms after the give-up"),
        ("legs", lying(grain_leg_ends_at_dispatch), "a grain leg ends with its last call's"),
        ("legs", lying(grain_failures_unanswered), "owed exactly one FAILURE_EMITTED"),
        ("grain-calls", zero_count_arms_one, "faults armed at beta with count=0 (for no "
         "call) failed"),
        ("defaults", hard_stop_by_default, "then stop() gave another trace than "
         "stop(graceful=True)"),
        ("hubs-turns-faults-and-the-breaker", ignores_breaker_threshold,
         "enqueued d4, post 4 of one key in one instant: the mesh ignores the threshold"),
        ("defaults", two_retries_by_default, "subscribe('client', 'nowhere') gave another "
         "trace than subscribe('client', 'nowhere', retries=5)"),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_each_broken_convention_is_flagged(
    convention: str, adapter: AdapterFactory, fragment: str
) -> None:
    found = _broken(adapter)
    assert convention in found, found
    assert any(fragment in line for line in found[convention]), found[convention]
    assert all(f"(docs/adapter.md#{convention})" in line for line in found[convention])


def test_a_custom_event_of_the_meshs_own_conforms() -> None:
    """The control of the custom-event conventions of the table above."""
    assert _broken(lying(plus_custom("tiny.turn_ended", hub_name="alpha", took_ms=0))) == {}


def test_a_capability_not_declared_is_not_applicable(capsys: pytest.CaptureFixture[str]) -> None:
    declared, results = conformance(no_grain_router)
    assert "grain_router" not in declared
    assert "grain" not in [r.program for r in results]
    code = main(["adapter-check", "--adapter", "lying_adapters:no_grain_router"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "not applicable (not declared): grain" in out
    # its round-trip method and create_hub's breaker_threshold show those two: declared
    assert "capabilities: breaker_threshold, envelope_roundtrip, stop_lifecycle, subscribe\n" in out


def test_the_command_prints_one_line_per_break_and_exits_1(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import lying_adapters

    monkeypatch.setattr(lying_adapters, "no_legs_end",
                        lying(without_all(EventKind.LEG_ENDED)), raising=False)
    code = main(["adapter-check", "--adapter", "lying_adapters:no_legs_end"])
    out = capsys.readouterr().out
    assert code == 1
    assert "  does not conform:" in out
    assert "    intake: seq " in out and "never ended" in out


def test_an_adapter_that_raises_keeps_its_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["adapter-check", "--adapter", "lying_adapters:raises_on_stop"])
    captured = capsys.readouterr()
    assert code == 1
    assert "the adapter raised KeyError: 'h0'" in captured.out
    assert "Traceback (most recent call last)" in captured.err
    assert "in stop" in captured.err  # the adapter's own frame


def test_a_bad_adapter_spec_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["adapter-check", "--adapter", "no_colon"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("mesh-harness adapter-check: error: --adapter: expected 'module:factory' "
                   "(for example 'reference_impl.adapter:make_adapter'), got 'no_colon'")


def test_the_adapter_is_imported_from_the_repositorys_pytest_pythonpath(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "srcmesh.py").write_text(
        "from reference_impl.adapter import make_adapter as make\n", encoding="utf-8")
    table = '[tool.harness]\nadapter = "srcmesh:make"\n'
    (tmp_path / "pyproject.toml").write_text(table, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    # The control: without the pythonpath pytest would use, the module is not found.
    assert main(["adapter-check"]) == 2
    assert "cannot import module 'srcmesh'" in capsys.readouterr().err
    (tmp_path / "pyproject.toml").write_text(
        table + '[tool.pytest.ini_options]\npythonpath = ["src"]\n', encoding="utf-8")
    assert main(["adapter-check"]) == 0, capsys.readouterr()
    sys.modules.pop("srcmesh", None)


def test_an_aggregate_without_the_timeout_flag_is_a_broken_convention() -> None:
    class AggregateAsRejection(ReferenceAdapter):
        """Its trace calls the aggregate's failure a plain refusal."""

        def trace(self) -> Sequence[TraceEvent]:
            return [replace(e, timed_out=False) if e.error == "ExceptionGroup" else e
                    for e in super().trace()]

    broken = _broken(AggregateAsRejection)
    assert list(broken) == ["grain-calls"]
    assert any("aggregate (the rejection first) injected at beta failed" in line
               and "timed_out=false" in line for line in broken["grain-calls"])


def test_a_declared_round_trip_without_its_method_is_a_broken_convention() -> None:
    class NoRoundTrip(ReferenceAdapter):
        set_envelope_roundtrip = None  # type: ignore[assignment]

    broken = _broken(NoRoundTrip)
    assert list(broken) == ["capabilities"]
    assert "no set_envelope_roundtrip(on) method" in broken["capabilities"][0]


def test_a_declared_raising_handler_that_reports_no_fault_is_a_broken_convention() -> None:
    broken = _broken(lying(without_all(EventKind.HANDLER_FAULTED)))
    assert list(broken) == ["capabilities"]
    assert "raised nothing" in broken["capabilities"][0]


def test_a_hub_that_stops_at_a_raising_handler_is_a_broken_convention() -> None:
    # The negative control from the registry: M41's pump stops at a handler that raised.
    broken = _broken(build_mutant(find_mutant("M41")).factory)
    assert list(broken) == ["intake"]
    assert "whose handler raised, was never handled" in broken["intake"][0]


@pytest.mark.parametrize(
    ("check_id", "adapter", "program"),
    [
        ("INV4", spends_at_attempt(FaultKind.TIMEOUT_NEXT), "fault-order"),
        ("INV4", spends_at_attempt(FaultKind.AGGREGATE_NEXT), "fault-order"),
        ("INV5", ignores_the_give_up, "give-up"),
    ],
    ids=["timeout-at-attempt", "aggregate-at-attempt", "deaf-to-the-give-up"],
)
def test_a_convention_adapter_check_names_is_one_the_invariant_reads(
    check_id: str, adapter: AdapterFactory, program: str
) -> None:
    """The mismatch the program names is the one the invariant would report as a
    violation: an adapter that passes the program cannot get that false violation."""
    from hypothesis import Phase, settings

    from invariants.dynamic.runner import run_invariant

    _, results = conformance(adapter)
    assert [r.program for r in results if r.broken] == [program]
    unshrunk = settings(settings.get_profile("ci"), phases=(Phase.explicit, Phase.generate))
    assert run_invariant(check_id, adapter, unshrunk).verdict == "violation"


class _Asleep(ReferenceAdapter):
    """Blocks in a step, using no CPU: only the wall-clock budget ends it."""

    def run_until_idle(self, limit_ms: int) -> bool:
        threading.Event().wait(1000)
        return super().run_until_idle(limit_ms)


def test_an_adapter_blocked_in_a_program_fails_as_hung_naming_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HARNESS_STEP_WALL_BUDGET", "0.3")
    with pytest.raises(MeshHung, match="conformance program 'intake' did not return"):
        conformance(_Asleep)
