"""Each planted bug changes what the mesh does on a scenario where the clean mesh keeps
its word; a race changes it only in the order FIFO never picks, at a tie the scenario
builds on purpose (each race scenario measures the tie: `tie` is True)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
import scenarios as s
from aiomesh import BUGS
from ordering import Pick, prefer


@dataclass(frozen=True)
class Case:
    program: s.Program
    clean: dict[str, Any]
    buggy: dict[str, Any]
    pick: Pick | None = None  # a race: the order that shows it
    mesh_args: dict[str, Any] = field(default_factory=dict)


CASES = {
    "nack-rejected": Case(s.rejected_post, {"rejections": 1, "answers": 0},
                          {"rejections": 1, "answers": 1}),
    "answer-failures": Case(s.failure_to_nowhere, {"answers": 0}, {"answers": 1}),
    "payload-type-guard": Case(s.heartbeat_to_nowhere, {"answers": 0, "direct_answers": 0},
                               {"answers": 1, "direct_answers": 0}),
    "unbounded-resubscribe": Case(
        s.subscribe_to_nowhere, {"attempts": 4, "end": "retries_exhausted:NotFound"},
        {"attempts": 9, "end": None}),
    "late-answer-resets-budget": Case(
        s.subscribe_to_slow_target,
        {"attempts": 4, "end": "retries_exhausted:timeout", "tie": True},
        {"attempts": 8, "end": None, "tie": True}, prefer("sleep:leg")),
    "shed-anything": Case(
        s.flood_blocked_hub,
        {"users_shed": 0, "beats_shed": 5, "users_handled": 5, "beats_handled": 0},
        {"users_shed": 2, "beats_shed": 5, "users_handled": 3, "beats_handled": 0}),
    "no-watermark": Case(
        s.flood_blocked_hub,
        {"users_shed": 0, "beats_shed": 5, "users_handled": 5, "beats_handled": 0},
        {"users_shed": 0, "beats_shed": 0, "users_handled": 5, "beats_handled": 5}),
    "resend-timeouts": Case(
        s.call_times_out, {"attempts": 1, "received": 1, "applied": 1, "answers": 1},
        {"attempts": 2, "received": 2, "applied": 2, "answers": 0}),
    "uncapped-backoff": Case(
        s.call_refused,
        {"attempts": 5, "received": 0, "delays": [100, 200, 400, 500], "answers": 1},
        {"attempts": 5, "received": 0, "delays": [100, 200, 400, 800], "answers": 1}),
    "resend-unheld-timeout": Case(
        s.call_to_slow_target, {"attempts": 1, "applied": 1, "tie": True},
        {"attempts": 5, "applied": 5, "tie": True}, prefer("sleep:c")),
    "key-without-identity": Case(s.fan_out, {"dropped": 0, "trips": 0},
                                 {"dropped": 1, "trips": 1}),
    "breaker-reopen-timer": Case(
        s.post_as_cooldown_ends, {"dropped": False, "tie": True},
        {"dropped": True, "tie": True}, prefer("sleep:leg")),
    "no-stop-hold": Case(
        s.stop_with_leg_in_flight,
        {"held": True, "released": "drained", "landed": True, "cut": False},
        {"held": False, "released": None, "landed": False, "cut": True}),
    "give-up-ignored": Case(s.give_up_mid_hold, {"released": "cancelled", "held_ms": 1_000},
                            {"released": "budget", "held_ms": 10_000}),
    "detached-nack": Case(s.answer_during_stop, {"answered": True, "landed_after_stop": False},
                          {"answered": True, "landed_after_stop": True}),
    "leg-registers-late": Case(
        s.post_and_stop_at_once,
        {"held": True, "leg_after_stop_began": False, "landed_after_stop": False, "tie": True},
        {"held": False, "leg_after_stop_began": True, "landed_after_stop": True, "tie": True},
        prefer("step:stop")),
    "pump-dies-on-fault": Case(s.request_behind_a_raising_handler,
                               {"faulted": 1, "handled_behind": 1},
                               {"faulted": 0, "handled_behind": 0}),
    "dedupe-after-reply": Case(
        s.call_times_out, {"attempts": 2, "received": 2, "applied": 1, "answers": 0},
        {"attempts": 2, "received": 2, "applied": 2, "answers": 0},
        mesh_args={"at_least_once": True}),
    "forget-answered": Case(
        s.call_to_slow_target, {"attempts": 5, "applied": 1, "tie": True},
        {"attempts": 5, "applied": 5, "tie": True}, prefer("sleep:c", "step:c"),
        mesh_args={"at_least_once": True}),
    "turn-awaits-flush": Case(
        s.two_batches, {"turns": 32, "turns_taking_time": 0, "last_handled_at": 0},
        {"turns": 32, "turns_taking_time": 2, "last_handled_at": 2}),
}
RACES = sorted(name for name, case in CASES.items() if case.pick is not None)


def test_every_planted_bug_has_its_case() -> None:
    assert sorted(CASES) == sorted(BUGS)
    assert len(BUGS) >= 12
    assert sorted(name for name, bug in BUGS.items() if bug.race) == RACES
    assert len(RACES) >= 4
    invariants = {bug.breaks for bug in BUGS.values()}
    assert {"INV1", "INV2", "INV3", "INV4", "INV5", "INV6", "INV7"} <= invariants


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_clean_mesh_keeps_its_word(name: str) -> None:
    case = CASES[name]
    assert s.play(case.program, **case.mesh_args) == case.clean
    if case.pick is not None:  # and in the order that shows the race, too
        assert s.play(case.program, pick=case.pick, **case.mesh_args) == case.clean


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_planted_bug_changes_what_the_mesh_does(name: str) -> None:
    case = CASES[name]
    assert case.buggy != case.clean
    assert s.play(case.program, bugs={name}, pick=case.pick, **case.mesh_args) == case.buggy


@pytest.mark.parametrize("name", RACES)
def test_a_race_is_missed_in_fifo_order(name: str) -> None:
    case = CASES[name]
    assert s.play(case.program, bugs={name}, **case.mesh_args) == case.clean


def test_an_unknown_bug_name_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown bug"):
        s.play(s.rejected_post, bugs={"no-such-bug"})
