"""The ready order comes from the chooser; FirstChooser's is asyncio's own FIFO."""

from __future__ import annotations

import asyncio

from aio_programs import (
    LastChooser,
    ScriptChooser,
    chains_meet,
    crossing,
    ping_pong,
    replies_on_two_deadlines,
    reply_or_timeout,
    run_program,
    same_instant,
)

from invariants.adapter import TIMER_TIE, FirstChooser
from invariants.aio import Legality, render_schedule, run
from invariants.dynamic.chooser import ScriptedChooser


def test_two_choosers_give_two_orders_at_a_known_tie() -> None:
    fifo, fifo_schedule = run_program("crossing", FirstChooser())
    last, last_schedule = run_program("crossing", LastChooser())
    assert fifo == ["a@0.030", "b@0.030", "c@0.030"]
    assert last == ["c@0.030", "b@0.030", "a@0.030"]
    assert all(decision.chosen == 0 for decision in fifo_schedule.decisions)
    assert render_schedule(fifo_schedule) == "FIFO"
    assert render_schedule(last_schedule).startswith("FIFO except:\n  at t=30 ms")


def test_first_chooser_is_the_stock_loops_order_without_timers() -> None:
    stock: list[str] = []
    asyncio.run(ping_pong(stock))
    virtual: list[str] = []
    run(ping_pong(virtual), chooser=FirstChooser())
    assert virtual == stock


def test_one_option_never_asks_the_chooser() -> None:
    async def alone(log: list[str]) -> None:
        for i in range(5):
            await asyncio.sleep(0.001)
            log.append(str(i))

    chooser = ScriptChooser()
    result = run(alone([]), chooser=chooser)
    assert chooser.asked == []
    assert result.schedule.decisions == []
    # Negative control: two tasks at the same instants are asked about.
    chooser = ScriptChooser()
    run(same_instant([]), chooser=chooser)
    assert chooser.asked and all(options > 1 for options, _ in chooser.asked)


def test_why_names_the_options() -> None:
    chooser = ScriptChooser()
    run(crossing([]), chooser=chooser)
    options, why = chooser.asked[0]
    assert options == 3
    assert why.startswith(f"{TIMER_TIE} at t=30 ms, step ")
    assert "which lands next: " in why
    for name in "abc":
        assert f"timer:_set_result_unless_cancelled({name})" in why
    # Once one has landed, the rest may also wait behind it: one option more.
    options, why = chooser.asked[1]
    assert options == 3
    assert why.endswith("or hold them behind 1 queued: timer:_set_result_unless_cancelled(a)")


def test_the_record_says_what_ran_before_what() -> None:
    log: list[str] = []
    result = run(crossing(log), chooser=ScriptChooser([2]))
    decision = result.schedule.reorderings()[0]
    assert (decision.time_us, decision.options, decision.chosen) == (30_000, 3, 2)
    assert decision.ran == "timer:_set_result_unless_cancelled(c)"
    assert decision.overtaken == (
        "timer:_set_result_unless_cancelled(a)", "timer:_set_result_unless_cancelled(b)",
    )
    assert render_schedule(result.schedule) == (
        "FIFO except:\n"
        f"  at t=30 ms (step {decision.step}), ran timer:_set_result_unless_cancelled(c) "
        "before timer:_set_result_unless_cancelled(a), timer:_set_result_unless_cancelled(b)"
    )
    assert log[0] == "c@0.030"


def test_a_hold_is_recorded_with_what_it_waits_behind() -> None:
    # Land a, then hold b and c behind a's wake-up: a still wakes first, b and c after.
    log: list[str] = []
    result = run(crossing(log), chooser=ScriptChooser([0, 2]))
    held = result.schedule.reorderings()[0]
    assert held.ran == "held back timer:_set_result_unless_cancelled(b), " \
        "timer:_set_result_unless_cancelled(c)"
    assert held.overtaken == ("timer:_set_result_unless_cancelled(a)",)
    assert "held back timer:_set_result_unless_cancelled(b), timer:_set_result_unless_" \
        "cancelled(c) behind timer:_set_result_unless_cancelled(a)" in render_schedule(
            result.schedule)
    assert log == ["a@0.030", "b@0.030", "c@0.030"]


def test_reply_against_timeout_is_a_tie_every_way() -> None:
    # FIFO: the timeout (armed at 0) lands before the reply (armed at 50 ms) and cancels
    # the wait before the reply comes.
    assert run_program("reply_or_timeout", FirstChooser())[0] == ["timeout"]
    # The reply lands first, the timeout right after it in the same iteration: the reply
    # is delivered and still lost (the task wakes cancelled).
    assert run_program("reply_or_timeout", ScriptChooser([1]))[0] == ["lost reply"]
    # The reply lands first and the timeout waits behind the task's wake-up: taken.
    assert run_program("reply_or_timeout", ScriptChooser([1, 1]))[0] == ["reply"]


def test_a_chooser_out_of_range_is_an_error() -> None:
    class Wild:
        def choose(self, options: int, why: str) -> int:
            return options

    try:
        run(crossing([]), chooser=Wild())
    except ValueError as error:
        assert "chooser picked 3 of 3 options (0..2)" in str(error)
    else:
        raise AssertionError("an out-of-range pick was taken")


def test_reorder_all_is_recorded_as_such() -> None:
    result = run(crossing([]), chooser=LastChooser(), legality=Legality.REORDER_ALL)
    assert result.schedule.legality is Legality.REORDER_ALL
    assert "reorder-all mode" in render_schedule(result.schedule)


def test_a_timeout_falling_due_with_a_reply_is_a_timer_tie() -> None:
    chooser = ScriptChooser()
    run(reply_or_timeout([]), chooser=chooser)
    assert chooser.asked[0][1].startswith(f"{TIMER_TIE} at t=100 ms, step ")
    assert all(why.startswith(TIMER_TIE) for _, why in chooser.asked)  # and its wake-up
    # Negative control: timers without a timeout among them are an ordinary interleaving.
    chooser = ScriptChooser()
    run(same_instant([]), chooser=chooser)
    assert not any(why.startswith(TIMER_TIE) for _, why in chooser.asked)


def test_the_tie_script_starts_afresh_at_each_tie_instant() -> None:
    # Both deadlines' replies are taken: the script that orders the first tie instant
    # orders the second one too, not what the first left of it.
    scripted = ScriptedChooser()
    scripted.load([], ties=[1, 1])
    log: list[str] = []
    run(replies_on_two_deadlines(log), chooser=scripted)
    assert log == ["reply", "reply"]
    # Negative control: the same answers in the general script reach neither tie.
    scripted.load([1, 1])
    log = []
    run(replies_on_two_deadlines(log), chooser=scripted)
    assert log == ["timeout", "timeout"]


def test_timers_armed_at_different_instants_falling_due_together_are_a_timer_tie() -> None:
    chooser = ScriptChooser()
    log: list[str] = []
    run(chains_meet(log), chooser=chooser)
    ties = [why for _, why in chooser.asked if why.startswith(TIMER_TIE)]
    assert ties and ties[0].startswith(f"{TIMER_TIE} at t=20 ms, step ")
    assert log == ["cooldown", "leg"]  # FIFO: the older timer first
    # The tie script reorders them: the leg lands before the cooldown ends.
    scripted = ScriptedChooser()
    scripted.load([], ties=[1])
    log = []
    run(chains_meet(log), chooser=scripted)
    assert log == ["leg", "cooldown"]
    # Negative control: timers armed together with one delay (same_instant's) are one
    # chain: they land in the order they were armed whatever the chooser says, and a
    # choice about them (wait behind the first one's wake-up) is no tie.
    chooser = ScriptChooser()
    log = []
    run(same_instant(log), chooser=chooser)
    assert chooser.asked and not any(why.startswith(TIMER_TIE) for _, why in chooser.asked)
    for chooser in (LastChooser(), ScriptChooser([1] * 20)):
        assert run_program("same_instant", chooser)[0] == log


def test_the_harness_spends_its_tie_script_only_at_timer_ties() -> None:
    # The harness's chooser answers a timer tie from the tie script: the reply first, the
    # timeout behind the task's wake-up.
    scripted = ScriptedChooser()
    scripted.load([], ties=[1, 1])
    log: list[str] = []
    run(reply_or_timeout(log), chooser=scripted)
    assert log == ["reply"]
    # Negative control: the same answers in the general script are not spent at the tie.
    scripted.load([1, 1])
    log = []
    run(reply_or_timeout(log), chooser=scripted)
    assert log == ["timeout"]
