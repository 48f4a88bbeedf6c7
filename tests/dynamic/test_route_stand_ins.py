"""A seed scenario that names a route the adapter lacks is replayed through a stand-in.

INV5's `stop-with-legs` and `stop-non-graceful` post through the grain route; on a mesh
without a grain router they were left out of `init`, and with them every drained hold and
every non-graceful stop with legs in flight. They are replayed through the monolith
router instead; an adapter that has the grain route replays them unchanged.
"""

from __future__ import annotations

from typing import Any

from invariants.adapter import Capability, MessageSpec, Route
from invariants.dynamic.judge import recording
from invariants.dynamic.plans import _light_scenarios, machine_class, program_runs_on
from invariants.dynamic.seed_programs import SEED_PROGRAMS
from invariants.dynamic.workload import with_routes
from reference_impl.adapter import ReferenceAdapter

NO_GRAIN = frozenset({Capability.SUBSCRIBE, Capability.STOP_LIFECYCLE})
ALL = frozenset(Capability)


def test_a_grain_route_is_replaced_in_posts_and_racing_posts() -> None:
    program = (
        ("user", {"sender": "client", "to": "h1", "route": Route.GRAIN, "count": 1}),
        ("stop", {"graceful": True, "racing": [("h0", Route.GRAIN), ("h1", Route.DIRECT)]}),
    )
    replaced = with_routes(program, {Route.GRAIN: Route.MONOLITH})
    assert replaced[0][1]["route"] is Route.MONOLITH
    assert replaced[1][1]["racing"] == [("h0", Route.MONOLITH), ("h1", Route.DIRECT)]
    assert with_routes(program, {}) is program  # nothing to replace: the program itself


def test_grain_scenarios_are_kept_on_a_mesh_without_a_grain_router() -> None:
    scenarios = _light_scenarios(("INV5",), NO_GRAIN)
    assert "INV5:stop-with-legs" in scenarios
    assert "INV5:stop-non-graceful" in scenarios
    # The control: as written they cannot run there (hence the stand-in).
    assert not program_runs_on(SEED_PROGRAMS["INV5"]["stop-with-legs"], NO_GRAIN)
    assert not program_runs_on(SEED_PROGRAMS["INV5"]["stop-non-graceful"], NO_GRAIN)


def test_a_family_the_adapter_lacks_still_leaves_the_scenario_out() -> None:
    # INV4's scenarios inject rejections and timeouts: no route stands in for a family.
    assert set(_light_scenarios(("INV4",), ALL)) == {
        "INV4:timeout", "INV4:one-timeout", "INV4:rejection-retry", "INV4:one-rejection",
        "INV4:aggregate"}
    assert _light_scenarios(("INV4",), NO_GRAIN) == []


def _routes_posted(capabilities: frozenset[Capability]) -> list[Route]:
    routes: list[Route] = []

    class Recorded(ReferenceAdapter):
        def post(self, sender: str, target: str, message: MessageSpec, **kw: Any) -> str:
            routes.append(kw.get("route", Route.MONOLITH))
            return super().post(sender, target, message, **kw)

    Recorded.capabilities = capabilities  # type: ignore[attr-defined]
    machine_type = machine_class("INV5", Recorded, capabilities=capabilities)
    with recording():
        machine = machine_type()
        machine.start((None, None, None), {})
        machine.workload.play("INV5:stop-with-legs")
        machine.teardown()
    return routes


def test_the_replayed_scenario_posts_through_the_stand_in() -> None:
    without = _routes_posted(NO_GRAIN)
    assert Route.MONOLITH in without
    assert Route.GRAIN not in without
    # The control: with a grain router the scenario keeps its grain posts.
    assert Route.GRAIN in _routes_posted(ALL)
