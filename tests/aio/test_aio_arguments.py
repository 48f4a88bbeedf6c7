"""A bad argument to the virtual loop is one line naming it, from every entry point
(`VirtualLoop`, `run`, `AsyncMeshAdapter`); each check's control is the valid call."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from typing import Any

import pytest

from invariants.adapter import FirstChooser
from invariants.aio import AsyncMeshAdapter, Legality, Runaway, VirtualLoop, run


async def _nothing() -> str:
    await asyncio.sleep(0.001)
    return "done"


def _build(entry: str, **kwargs: Any) -> None:
    """Make a loop through `entry` with `kwargs`, and run a program on it."""
    if entry == "VirtualLoop":
        VirtualLoop(**kwargs).run_until_complete(_nothing())
    elif entry == "run":
        assert run(_nothing(), **kwargs).result == "done"
    else:
        AsyncMeshAdapter(FirstChooser(), **kwargs).advance(1)


ENTRIES = ["VirtualLoop", "run", "AsyncMeshAdapter"]
BUDGET = r"^step_budget must be a positive int or None \(no bound\), got "


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("budget", [0, -5])
def test_a_step_budget_below_one_is_refused(entry: str, budget: int) -> None:
    with pytest.raises(ValueError, match=BUDGET + str(budget) + "$"):
        _build(entry, step_budget=budget)


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("budget", [1.5, True, "100"])
def test_a_step_budget_of_another_kind_is_refused(entry: str, budget: object) -> None:
    with pytest.raises(TypeError, match=BUDGET):
        _build(entry, step_budget=budget)


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("budget", [None, 10, 200_000])
def test_the_control_a_valid_step_budget_runs(entry: str, budget: int | None) -> None:
    _build(entry, step_budget=budget)


def test_a_budget_of_one_still_counts_steps() -> None:
    # The smallest budget allowed means what the docs say: one step per instant.
    async def spin() -> None:
        await asyncio.sleep(0)

    with pytest.raises(Runaway, match=r"^1 steps without virtual time moving \(t=0 ms, "
                                      r"steps 1–1\)"):
        run(spin(), step_budget=1)


VALUES = [legality.value for legality in Legality]
LEGALITY = ("^legality must be one of " + ", ".join(repr(v) for v in VALUES)
            + r" \(a Legality\), got ")


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("legality", ["bogus", VALUES[0].upper(), 0, None])
def test_an_unknown_legality_is_refused(entry: str, legality: object) -> None:
    with pytest.raises(ValueError, match=LEGALITY + _escaped(repr(legality)) + "$"):
        _build(entry, legality=legality)


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("legality", [*Legality, *VALUES])
def test_the_control_a_legality_or_its_value_is_taken(entry: str, legality: object) -> None:
    _build(entry, legality=legality)


def test_a_legality_given_by_its_value_is_the_legality() -> None:
    loop = VirtualLoop(legality="reorder_all")
    assert loop.schedule.legality is Legality.REORDER_ALL


def _escaped(text: str) -> str:
    return "".join("\\" + c if c in "()[].*+?^$|{}\\" else c for c in text)


def _advance(loop: VirtualLoop) -> Callable[[object], object]:
    return loop.advance  # type: ignore[return-value]


def _adapter_advance(loop: VirtualLoop) -> Callable[[object], object]:
    adapter = AsyncMeshAdapter(FirstChooser())
    adapter.loop = loop
    return adapter.advance  # type: ignore[return-value]


def _advance_us(loop: VirtualLoop) -> Callable[[object], object]:
    return loop.advance_us  # type: ignore[return-value]


def _run_until_idle(loop: VirtualLoop) -> Callable[[object], object]:
    return loop.run_until_idle  # type: ignore[return-value]


TIME_CALLS = {
    "advance": (_advance, "ms", "milliseconds"),
    "AsyncMeshAdapter.advance": (_adapter_advance, "ms", "milliseconds"),
    "advance_us": (_advance_us, "us", "microseconds"),
    "run_until_idle": (_run_until_idle, "limit_ms", "milliseconds"),
}


@pytest.mark.parametrize("call", list(TIME_CALLS))
@pytest.mark.parametrize("value", [1.5, 2.0, math.inf, math.nan, True, "5", None])
def test_a_time_that_is_not_a_whole_count_is_refused(call: str, value: object) -> None:
    make, name, unit = TIME_CALLS[call]
    loop = VirtualLoop()
    said = call.removeprefix("AsyncMeshAdapter.")
    with pytest.raises(TypeError, match=(
        f"^{said}: {name} must be a whole number of {unit} \\(an int >= 0\\), got "
        + _escaped(repr(value)) + "$"
    )):
        make(loop)(value)
    assert loop.now_us == 0 and isinstance(loop.now_us, int)  # the clock is untouched


@pytest.mark.parametrize("call", list(TIME_CALLS))
def test_a_negative_time_is_refused(call: str) -> None:
    make, name, _ = TIME_CALLS[call]
    said = call.removeprefix("AsyncMeshAdapter.")
    with pytest.raises(ValueError, match=f"^{said}: {name} must be >= 0, got -1$"):
        make(VirtualLoop())(-1)


@pytest.mark.parametrize("call", list(TIME_CALLS))
@pytest.mark.parametrize("value", [0, 3])
def test_the_control_a_whole_time_moves_the_clock(call: str, value: int) -> None:
    make, _, unit = TIME_CALLS[call]
    loop = VirtualLoop()
    make(loop)(value)
    if call == "run_until_idle":  # idle at once: the clock stays
        assert loop.now_us == 0
    else:
        assert loop.now_us == value * (1 if unit == "microseconds" else 1000)
    assert isinstance(loop.now_us, int) and isinstance(loop.time(), float)
