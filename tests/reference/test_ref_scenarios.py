"""Every figure the scenarios of the reference mesh pin, for several seeds (issue: runnable
scenarios; seeds 000, 001, 004)."""

from __future__ import annotations

import json

import pytest

from invariants.trace import TraceEvent
from reference_impl.__main__ import main
from reference_impl.scenarios import SCENARIOS, run_scenario

SEEDS = (0, 1, 2)


def load_jsonl(text: str) -> list[TraceEvent]:
    """The events of canonical JSON lines (what `dump_jsonl` writes)."""
    return [TraceEvent.from_json(json.loads(line)) for line in text.splitlines() if line]


@pytest.mark.parametrize("seed", SEEDS)
def test_flood_sheds_only_ignorable_and_the_probe_is_handled(seed: int) -> None:
    """Seed 001 Invariant 3 (watermark 25, test 4)."""
    s = run_scenario("flood", seed).summary
    assert s["shed_count"] > 0
    assert s["trip_count"] == 0
    assert s["probe_handled"] is True
    assert s["non_sheddable_shed"] == 0
    assert s["probe_handled_ms_after_release"] <= 10_000


@pytest.mark.parametrize("seed", SEEDS)
def test_fanout_is_never_dropped(seed: int) -> None:
    """Seed 001 #1200: 5,000 payload identities, one window."""
    s = run_scenario("fanout", seed).summary
    assert (s["drops"], s["trip_count"], s["handled"]) == (0, 0, 5_000)
    assert s["window_ms"] < 1_000


@pytest.mark.parametrize("seed", SEEDS)
def test_storm_on_one_key_trips_once(seed: int) -> None:
    s = run_scenario("storm", seed).summary
    assert (s["trip_count"], s["drops"], s["handled"]) == (1, 1, 2_000)
    assert s["failures_emitted"] == 0  # a drop is Ignored, never NACKed


@pytest.mark.parametrize("seed", SEEDS)
def test_missing_target_subscription_terminates(seed: int) -> None:
    """Seed 001 Invariant 2: N = 5 retries, 6 attempts."""
    s = run_scenario("missing-target", seed).summary
    assert (s["attempts"], s["terminated"], s["sent_after_termination"]) == (6, True, 0)


@pytest.mark.parametrize("seed", SEEDS)
def test_rejection_is_terminal(seed: int) -> None:
    """Seed 001 Invariant 1: count DeliveryFailure traffic, it must be 0, not fewer."""
    s = run_scenario("rejection", seed).summary
    assert (s["rejections"], s["failures_emitted"], s["reposts"]) == (1, 0, 0)
    assert s["rejections_repeated"] == 100
    assert s["follow_ups_repeated"] == 0
    assert s["failure_traffic_repeated"] == 0


@pytest.mark.parametrize("seed", SEEDS)
def test_timed_out_delivery_reaches_the_callee_once(seed: int) -> None:
    """Seed 000: 1 call at the callee (pre-fix 7)."""
    s = run_scenario("timeout", seed).summary
    assert (s["calls_at_callee"], s["copies_received"], s["copies_handled"]) == (1, 1, 1)
    assert s["answer"] == "Failed"


@pytest.mark.parametrize("seed", SEEDS)
def test_rejected_delivery_spends_its_budget(seed: int) -> None:
    """Seed 000: 7 calls, 9.75 s of retry delay; 4 retries give 5 calls."""
    s = run_scenario("rejection-retry", seed).summary
    assert (s["calls_at_callee"], s["retry_delay_ms"]) == (7, 9_750)
    assert s["calls_at_callee_4_retries"] == 5
    assert s["copies_received"] == 0


@pytest.mark.parametrize("seed", SEEDS)
def test_one_answer_per_request_through_each_router(seed: int) -> None:
    """Seed 001 #1485: NACKs at the sender 1 (pre-fix 3), also after a JSON round trip."""
    s = run_scenario("answer-once", seed).summary
    assert s["nacks_at_sender"] == {
        "sender-monolith": 1, "sender-monolith-roundtrip": 1,
        "sender-grain": 1, "sender-grain-roundtrip": 1,
    }


@pytest.mark.parametrize("seed", SEEDS)
def test_stop_with_legs_lands_them_before_deactivation(seed: int) -> None:
    """Seed 004: in flight at deactivation 0 (pre-fix >= 1); nothing routing after stop."""
    s = run_scenario("stop-with-legs", seed).summary
    assert (s["in_flight_at_deactivation"], s["routing_after_stop"]) == (0, 0)
    assert (s["held"], s["hold_release"], s["stop_completed"]) == (True, "drained", True)


@pytest.mark.parametrize("seed", SEEDS)
def test_stop_budget_expiry_releases_at_30_s(seed: int) -> None:
    s = run_scenario("stop-budget-expiry", seed).summary
    assert (s["hold_release"], s["held_ms"]) == ("budget", 30_000)
    assert len(s["residual_legs"]) == 2
    assert s["residual_started_ms"] == sorted(s["residual_started_ms"])  # oldest first
    assert s["routing_after_stop"] == 0


@pytest.mark.parametrize("seed", SEEDS)
def test_stop_non_graceful_does_not_hold(seed: int) -> None:
    s = run_scenario("stop-non-graceful", seed).summary
    assert (s["held"], s["hold_release"]) == (False, None)
    assert s["in_flight_at_deactivation"] >= 1
    assert s["routing_after_stop"] == 0


def test_every_listed_scenario_exists() -> None:
    assert sorted(SCENARIOS) == sorted([
        "flood", "fanout", "storm", "missing-target", "rejection", "timeout",
        "rejection-retry", "answer-once", "stop-with-legs", "stop-budget-expiry",
        "stop-non-graceful",
    ])


def test_unknown_scenario_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown scenario 'nope'"):
        run_scenario("nope", 0)


def test_cli_prints_trace_digest_and_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "--scenario", "timeout", "--seed", "3"]) == 0
    trace = load_jsonl(capsys.readouterr().out)
    assert [e.seq for e in trace] == list(range(len(trace)))
    assert main(["trace", "--scenario", "timeout", "--seed", "3", "--digest"]) == 0
    digest = capsys.readouterr().out.strip()
    assert len(digest) == 64 and int(digest, 16) >= 0
    assert main(["trace", "--scenario", "timeout", "--seed", "3", "--summary"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["scenario"], summary["seed"], summary["calls_at_callee"]) == ("timeout", 3, 1)
