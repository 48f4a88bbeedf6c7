"""Seed programs state the durations that stand for a mesh's own figures as those figures
(`Figure`), so a mesh with other numbers meets the same shape: "the subscriber's turn held
just past the subscribe timeout" is 100 ms past its timeout, not past the seeds' 30 s."""

from __future__ import annotations

from dataclasses import replace

import pytest

from invariants.checks import CheckParams
from invariants.dynamic.seed_programs import SEED_PROGRAMS, Figure, resolved

DEFAULT = CheckParams()


def _durations(program: object) -> list[int]:
    return [arguments.get("duration_ms", arguments.get("ms"))
            for step, arguments in program  # type: ignore[attr-defined]
            if step in ("block", "advance", "slow")]


def test_on_the_seeds_figures_a_program_is_what_it_always_was() -> None:
    assert _durations(resolved(SEED_PROGRAMS["INV2"]["answer-in-backoff"], DEFAULT)) == [
        30_100, 31_000]
    assert _durations(resolved(SEED_PROGRAMS["INV5"]["stop-budget-expiry"], DEFAULT)) == [
        45_000, 1]


def test_on_a_meshs_own_figures_the_shape_follows_them() -> None:
    params = replace(DEFAULT, subscribe_timeout_ms=2_500, stop_budget_ms=12_000)
    assert _durations(resolved(SEED_PROGRAMS["INV2"]["answer-in-backoff"], params)) == [
        2_600, 3_500]
    assert _durations(resolved(SEED_PROGRAMS["INV5"]["stop-budget-expiry"], params)) == [
        27_000, 1]
    # Negative control: a duration that is no figure of the mesh's stays as written.
    assert _durations(resolved(SEED_PROGRAMS["INV5"]["stop-given-up"], params))[0] == 20_000


def test_every_figure_a_program_names_is_one_in_ms() -> None:
    for programs in SEED_PROGRAMS.values():
        for program in programs.values():
            for _step, arguments in program:
                for value in arguments.values():
                    if isinstance(value, Figure):
                        assert isinstance(value.of(DEFAULT), int)


def test_a_figure_that_is_not_in_ms_is_refused() -> None:
    with pytest.raises(TypeError, match="ordered_routes is not a figure in ms"):
        Figure("ordered_routes").of(DEFAULT)
