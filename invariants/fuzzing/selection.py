"""The state machines a session fuzzes, and the example-database key of each.

The machine classes are built exactly as the dynamic checks build them
(`invariants.machines.machine_class` with its default class name), so a failure a session
saves lands under the same database key a `pytest -p harness` run of the same invariant
replays.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from hypothesis import settings as Settings
from hypothesis.internal.reflection import function_digest
from hypothesis.stateful import get_state_machine_test

from invariants.fuzzing.config import FuzzConfig, resolve_factory
from invariants.machines import MeshMachine, machine_class

_state_machine_test = cast(Callable[..., Any], get_state_machine_test)


def build_machines(config: FuzzConfig) -> dict[str, type[MeshMachine]]:
    """One machine class per selected invariant, over the configured adapter or mutant."""
    factory = resolve_factory(config)
    return {check_id: machine_class(check_id, factory) for check_id in config.invariants}


def target_name(check_id: str) -> str:
    """The name a machine's TestCase has in the fuzz target module (and in node ids)."""
    return f"Test{check_id}"


def check_of(nodeid: str) -> str | None:
    """The invariant a fuzz target's node id runs (`...::TestINV4::runTest` -> `INV4`)."""
    for part in nodeid.split("::"):
        if part.startswith("TestINV"):
            return part.removeprefix("Test")
    return None


def database_key(machine: type[MeshMachine]) -> bytes:
    """The key under which Hypothesis (and HypoFuzz) store this machine's failures."""
    test = _state_machine_test(machine, settings=Settings(database=None))
    return function_digest(test.hypothesis.inner_test)
