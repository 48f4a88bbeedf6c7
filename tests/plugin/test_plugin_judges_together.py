"""`pytest -p harness` judges an adapter's selected invariants together, as `check` does
(`harness.invariant_group`): an item fails on a violation of its invariant that only
another selected invariant's plan drove, saying whose plan found it. Its controls: the
same mesh with only the item's own invariant selected passes (nothing drives the bug),
and the clean reference passes both invariants.

The mesh is `RaisesOnFanOut` (tests/dynamic/bystander_meshes.py): one fan-out payload's
handler raises, which INV7 judges and only INV6's plan drives."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings as Settings

from invariants.dynamic.profiles import profile

DYNAMIC = Path(__file__).resolve().parents[1] / "dynamic"
PROFILE = "judged-together-small"  # derandomized, a few examples per invariant
Settings.register_profile(PROFILE, Settings(profile("ci"), max_examples=5))


def _run(pytester: pytest.Pytester, adapter: str, invariants: str) -> pytest.RunResult:
    pytester.makepyprojecttoml('[tool.harness]\npaths = ["src"]\n')
    pytester.makepyfile(**{"src/mesh": "VALUE = 1\n"})
    pytester.syspathinsert(DYNAMIC)
    return pytester.runpytest(
        "-p", "harness", "-m", "harness_invariant", "-p", "no:cacheprovider",
        f"--harness-adapter={adapter}", f"--harness-invariants={invariants}",
        f"--harness-profile={PROFILE}", "--harness-search-only", "-rA")


def test_an_item_fails_on_what_another_selected_plan_drove(pytester: pytest.Pytester) -> None:
    result = _run(pytester, "bystander_meshes:RaisesOnFanOut", "INV6,INV7")
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "FAILED harness::INV7[bystander_meshes:RaisesOnFanOut]" in out
    assert "though the harness posted no payload that raises" in out
    assert "Found while driving INV6's plan: INV6's run judged INV7 as a bystander" in out
    assert "state.fanout(" in out


def test_alone_the_item_does_not_see_it(pytester: pytest.Pytester) -> None:
    result = _run(pytester, "bystander_meshes:RaisesOnFanOut", "INV7")
    result.assert_outcomes(passed=1)


def test_the_clean_reference_passes_both(pytester: pytest.Pytester) -> None:
    result = _run(pytester, "reference_impl.adapter:make_adapter", "INV6,INV7")
    result.assert_outcomes(passed=2)
    out = result.stdout.str()
    assert "Found while driving" not in out
