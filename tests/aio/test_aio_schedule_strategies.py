"""The run's schedule strategies (`invariants.dynamic.chooser`): the step scripts, change
points (FIFO except at the k-th ordering decision of the whole run) and uniform choice,
on the virtual loop. A change point reorders what no step script reaches (a decision
after a step's first ones), and the schedule record says the deviation; the network's
verdicts stay with the scripts; a bad strategy is one clear error."""

from __future__ import annotations

import pytest
from aio_minimesh import make
from aio_programs import chains_meet, run_program
from hypothesis import settings as Settings

from invariants.adapter import NETWORK_VERDICT, TIMER_TIE
from invariants.aio import render_schedule, run
from invariants.dynamic import plans
from invariants.dynamic.chooser import ScriptedChooser
from invariants.dynamic.profiles import profile
from invariants.dynamic.runner import run_invariant
from reference_impl.adapter import make_adapter


def _chooser(*strategy: object) -> ScriptedChooser:
    chooser = ScriptedChooser()
    chooser.use(strategy)
    return chooser


def test_scripts_with_empty_lists_are_fifo() -> None:
    log, schedule = run_program("crossing", _chooser("scripts"))
    assert render_schedule(schedule) == "FIFO"
    assert log == run_program("crossing", _chooser("pct", ()))[0]


def test_a_change_point_deviates_at_its_decision_and_nowhere_else() -> None:
    fifo: list[str] = []
    run(chains_meet(fifo), chooser=_chooser("scripts"))
    assert fifo == ["cooldown", "leg"]
    log: list[str] = []
    result = run(chains_meet(log), chooser=_chooser("pct", ((0, 1),)))
    assert log == ["leg", "cooldown"]  # the first ordering decision took its alternative
    [deviation] = result.schedule.reorderings()
    assert deviation.chosen >= 1
    assert render_schedule(result.schedule).startswith("FIFO except:\n  at t=20 ms")
    # Control: a change point past the run's last decision changes nothing.
    late: list[str] = []
    run(chains_meet(late), chooser=_chooser("pct", ((10_000, 1),)))
    assert late == fifo


def test_a_change_point_always_deviates_whatever_the_options() -> None:
    chooser = _chooser("pct", ((0, 2), (1, 4)))
    assert chooser.choose(2, f"{TIMER_TIE} at t=1 ms, step 1: ...") == 1  # not 2 % 2 == 0
    assert chooser.choose(3, "aio ready order at t=1 ms, step 2: ...") == 2
    assert chooser.choose(3, "aio ready order at t=1 ms, step 3: ...") == 0  # no point


def test_the_network_verdicts_stay_with_the_step_scripts() -> None:
    chooser = _chooser("pct", ((0, 1),))
    chooser.load([2])
    assert chooser.choose(3, f"{NETWORK_VERDICT} at t=1 ms, step 1: deliver; or hold") == 2
    assert chooser.choose(3, "aio ready order at t=1 ms, step 2: ...") == 1  # order 0
    # Control: under the scripts the same script answers the first decision, whatever it is.
    chooser = _chooser("scripts")
    chooser.load([2])
    assert chooser.choose(3, "aio ready order at t=1 ms, step 1: ...") == 2


def test_uniform_choice_is_the_same_for_the_same_seed_and_reaches_every_option() -> None:
    def picks(seed: int) -> list[int]:
        chooser = _chooser("uniform", seed)
        return [chooser.choose(3, "aio ready order") for _ in range(60)]

    assert picks(7) == picks(7)
    assert picks(7) != picks(8)
    assert set(picks(7)) == {0, 1, 2}


@pytest.mark.parametrize("strategy", [("fifo",), ("pct", 3), ("pct", ((1, -1),)),
                                      ("uniform", "x"), ()])
def test_a_bad_strategy_is_one_clear_error(strategy: tuple[object, ...]) -> None:
    with pytest.raises(ValueError, match=r"^schedule must be \('scripts',\), "):
        ScriptedChooser().use(strategy)


def test_a_kit_machine_draws_every_strategy_and_the_reference_none(
        monkeypatch: pytest.MonkeyPatch) -> None:
    used: list[str] = []
    use = ScriptedChooser.use

    def recording(self: ScriptedChooser, strategy: tuple[object, ...]) -> None:
        used.append(str(strategy[0]))
        use(self, strategy)

    monkeypatch.setattr(ScriptedChooser, "use", recording)
    small = Settings(profile("ci"), max_examples=40)
    run_invariant("INV4", make, small, seed_scenarios=False, bystanders=False)
    assert set(used) == {"scripts", "pct", "uniform"}
    used.clear()
    run_invariant("INV4", make_adapter, small, seed_scenarios=False, bystanders=False)
    assert used and set(used) == {"scripts"}  # its init draws none
    # A benchmark measuring one strategy alone narrows the portfolio to it.
    monkeypatch.setattr(plans, "schedule_portfolio", ("pct",))
    used.clear()
    run_invariant("INV4", make, small, seed_scenarios=False, bystanders=False)
    assert set(used) == {"pct"}
