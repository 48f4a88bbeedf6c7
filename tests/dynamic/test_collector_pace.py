"""A search paces the cyclic collector's full passes, and leaves the thresholds as it found them."""

from __future__ import annotations

import gc

import pytest

from invariants.dynamic import runner


def test_full_passes_are_paced_during_a_search_and_restored_after() -> None:
    before = gc.get_threshold()
    with runner._full_collections_paced():
        young, middle, full = gc.get_threshold()
        assert (young, middle) == before[:2]
        assert full == max(before[2], runner.FULL_COLLECTION_PACE)
    assert gc.get_threshold() == before


def test_the_thresholds_are_restored_when_the_search_raises() -> None:
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), runner._full_collections_paced():
        raise RuntimeError("the mesh raised")
    assert gc.get_threshold() == before
