"""A run's focused hub: on a networked mesh, half the runs send every hub argument to one hub
(swarm testing over the targets), so a story told across several steps at one node meets
there. The hub is
drawn, not rewritten after the draw: a run's report prints the hubs its steps took."""

from __future__ import annotations

from hypothesis import find, given, settings
from hypothesis import strategies as st

from invariants.dynamic import plans
from invariants.dynamic.driver import HUBS, MISSING


@settings(max_examples=200, derandomize=True, database=None)
@given(st.data())
def test_a_focused_run_takes_its_hub_for_every_hub_argument(data: st.DataObject) -> None:
    focus = data.draw(plans._FOCUS)
    hubs = data.draw(st.lists(plans._target(HUBS), min_size=1, max_size=6))
    targets = data.draw(st.lists(plans._target(HUBS + MISSING), min_size=1, max_size=6))
    if focus is not None:
        assert set(hubs) == {focus}
        # a missing target stays missing: its own obligations need it
        assert all(t == focus or t in MISSING for t in targets)
    assert set(hubs) <= set(HUBS)
    assert set(targets) <= set(HUBS + MISSING)


def test_an_unfocused_run_spreads_its_hubs_and_missing_targets_stay() -> None:
    # The control: without a focus, steps of one run take different hubs; with one, a
    # missing target is still drawn.
    spread = find(st.tuples(plans._FOCUS, st.lists(plans._target(HUBS), min_size=2)),
                  lambda drawn: drawn[0] is None and len(set(drawn[1])) > 1,
                  settings=settings(derandomize=True, database=None))
    assert len(set(spread[1])) > 1
    missing = find(st.tuples(plans._FOCUS, plans._target(HUBS + MISSING)),
                   lambda drawn: drawn[0] is not None and drawn[1] in MISSING,
                   settings=settings(derandomize=True, database=None))
    assert missing[1] in MISSING


def test_a_mesh_without_a_network_is_never_focused() -> None:
    # A mesh of one process keeps the draws it was measured on: its hub arguments spread
    # even in a run that drew a focus; a networked mesh's take it.
    plain = plans._family_arguments(plans.PLANS["INV7"])["user"]["to"]
    spread = find(st.tuples(plans._FOCUS, st.lists(plain, min_size=2)),
                  lambda drawn: drawn[0] is not None and len(set(drawn[1]) & set(HUBS)) > 1,
                  settings=settings(derandomize=True, database=None))
    assert len(set(spread[1]) & set(HUBS)) > 1
    focused = plans._family_arguments(plans.PLANS["INV7"], focused=True)["user"]["to"]
    [drawn] = [find(st.tuples(plans._FOCUS, st.lists(focused, min_size=2)),
                    lambda drawn: drawn[0] is not None,
                    settings=settings(derandomize=True, database=None))]
    assert set(drawn[1]) <= {drawn[0], *MISSING}
