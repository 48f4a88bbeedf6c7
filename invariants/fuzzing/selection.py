"""The state machines a session fuzzes, and the example-database key of each.

The machine classes are built exactly as the dynamic checks build them
(`mesh_keys.keyed_machine_class`: the default class name, keyed by the mesh), so a failure
a session saves lands under the database key a `pytest -p harness` run of the same
invariant on the same mesh with the same figures (`[tool.harness.params]`) replays, and
under no other mesh's key, nor under other figures'.
"""

from __future__ import annotations

from invariants.dynamic.driver import MeshMachine
from invariants.dynamic.mesh_keys import database_key, keyed_machine_class
from invariants.fuzzing.config import FuzzConfig, resolve_factory

__all__ = ["build_machines", "check_of", "database_key", "target_name"]


def build_machines(config: FuzzConfig) -> dict[str, type[MeshMachine]]:
    """One machine class per selected invariant, over the configured adapter or mutant,
    holding it to the configured figures."""
    factory = resolve_factory(config)
    return {
        check_id: keyed_machine_class(check_id, factory, params=config.params)
        for check_id in config.invariants
    }


def target_name(check_id: str) -> str:
    """The name a machine's TestCase has in the fuzz target module (and in node ids)."""
    return f"Test{check_id}"


def check_of(nodeid: str) -> str | None:
    """The invariant a fuzz target's node id runs (`...::TestINV4::runTest` -> `INV4`)."""
    for part in nodeid.split("::"):
        if part.startswith("TestINV"):
            return part.removeprefix("Test")
    return None

