"""Negative controls: every registered mutant fails the machine of each invariant it must
break. The kill matrix (tests/mutants/test_kill_matrix.py) proves each of those kills once:
by the mutant's own seed program, fast, small, failing only that invariant, with a full
failure report. How soon the drawn rules alone find each one is search power, measured over
seeds by benchmarks/search_power.py."""

from mutant_controls import FIRST_CONTROL

from invariants.checks import CHECK_IDS


def test_every_invariant_has_a_negative_control() -> None:
    assert set(FIRST_CONTROL) == set(CHECK_IDS)
