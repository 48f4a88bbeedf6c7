"""The mesh a state machine drives is part of its example-database key.

Hypothesis keys a state machine's saved examples by a digest of the machine class, and a
class made by `machine_class` digests to its name alone (`INV4Machine`). Without the mesh
in the key, a failure a session found on one mesh would be replayed on every other: a CI
run on mesh A would fail on mesh B's bug, and a session on a mesh without the bug would
see the saved example pass and delete it as fixed.

`keyed_machine_class` is the one place the key is set. Hypothesis' `get_state_machine_test`
digests the machine class with `function_digest`, which adds the class's
`_hypothesis_internal_add_digest` bytes (the hook Hypothesis' pytest plugin and HypoFuzz
use to give each parametrized test its own key). Hypothesis' own runs
(`run_state_machine_as_test`), HypoFuzz's collection of a machine's `TestCase` and
`selection.database_key` all digest the class the same way, so one attribute keys all
three: `python -m harness fuzz --adapter X` saves under the key a `pytest -p harness
--harness-adapter X` run reads.

A mesh whose schedules depend on the interpreter (one on the asyncio kit's virtual loop:
asyncio's internals decide which callbacks a step schedules, so a saved choice sequence
replays another schedule on another Python) has the Python version in its key too
(`schedule_portable = False` on its adapter): a failure saved on 3.12 is neither replayed
nor deleted as fixed on 3.11.

The figures the checkers hold the mesh to are part of the key too, where they are not the
seeds' (`[tool.harness.params]`, `--param`): a failure saved under `delivery_retries = 2`
is no failure under the default 6, and is neither replayed nor deleted as fixed there. The
seeds' figures add nothing, so the keys saved before they could change stay as they were.

Hypothesis also seeds a derandomized run (the `ci` profile) with that digest. A keyed
machine keeps the seed of the check alone (`run_keyed_machine`), so `ci` tries the same
programs on every mesh, the reference and each of its mutants alike: only where the
examples are saved depends on the mesh.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any, cast

from hypothesis import Phase
from hypothesis import settings as Settings
from hypothesis.stateful import get_state_machine_test, run_state_machine_as_test

from invariants.adapter import AdapterFactory, FirstChooser
from invariants.adapter_calls import MESH_ID_ATTRIBUTE as MESH_ID_ATTRIBUTE
from invariants.adapter_calls import calling_adapter, factory_name
from invariants.checks import CheckParams, changed_figures
from invariants.dynamic.driver import MeshMachine
from invariants.dynamic.plans import machine_class
from invariants.dynamic.profiles import FUZZ, PROFILES
from invariants.engine_internals.hypothesis_private import (
    add_to_digest,
    function_digest,
    set_use_seed,
)

# Hypothesis leaves these untyped; their contract is (machine class, settings=...).
_state_machine_test = cast(Callable[..., Any], get_state_machine_test)
_run_machine = cast(Callable[..., None], run_state_machine_as_test)

# Ours: the seed a derandomized run of the machine, unkeyed, would use.
_CHECK_SEED_ATTRIBUTE = "_harness_check_seed"


def mesh_id(factory: AdapterFactory) -> str:
    """The identity of the mesh a factory makes: the factory's `harness_mesh_id` where it
    sets one (a pre-fix mutant's build sets `mutant:M2`), else its `module:qualified name`
    (what an adapter spec names). The adapter's errors name it the same way."""
    return factory_name(factory)


def keyed_machine_class(
    check_id: str,
    adapter_factory: AdapterFactory,
    *,
    params: CheckParams | None = None,
    **options: Any,
) -> type[MeshMachine]:
    """`machine_class(check_id, adapter_factory, params=params, **options)`, its saved
    examples keyed by the check, the mesh the factory makes and the figures where they are
    not the seeds'."""
    machine = machine_class(check_id, adapter_factory, params=params, **options)
    setattr(machine, _CHECK_SEED_ATTRIBUTE, int.from_bytes(database_key(machine), "big"))
    with calling_adapter(factory_name(adapter_factory), "from its factory"):
        portable = bool(getattr(adapter_factory(FirstChooser()), "schedule_portable", True))
    add_to_digest(machine, key_digest(adapter_factory, params, portable=portable))
    return machine


def key_digest(adapter_factory: AdapterFactory, params: CheckParams | None = None, *,
               portable: bool = True) -> bytes:
    """What a keyed machine adds to its digest: the mesh's identity, the Python version
    where its schedules are not portable across versions, then the figures that differ
    from the seeds' (nothing more for the seeds' own)."""
    digest = mesh_id(adapter_factory).encode("utf-8")
    if not portable:
        digest += f"\0python:{sys.version_info.major}.{sys.version_info.minor}".encode()
    changes = changed_figures(params) if params is not None else {}
    if changes:
        digest += b"\0params:" + json.dumps(changes, sort_keys=True).encode("utf-8")
    return digest


def database_key(machine: type[MeshMachine]) -> bytes:
    """The key under which Hypothesis (and HypoFuzz) store this machine's examples: the
    digest of its test, which depends on the check and, once keyed, on the mesh."""
    test = _state_machine_test(machine, settings=Settings(database=None))
    return function_digest(test.hypothesis.inner_test)


def run_keyed_machine(machine: type[MeshMachine], settings: Settings) -> None:
    """`run_state_machine_as_test`; a derandomized run is seeded by the check alone (as
    an unkeyed machine would be), any other run draws at random as usual. Saved examples
    are replayed first at the `fuzz` profile's step count (`replay_first`)."""
    seed = getattr(machine, _CHECK_SEED_ATTRIBUTE, None) if settings.derandomize else None
    set_use_seed(machine, seed)
    replay = replay_first(settings)
    # Hypothesis refuses a run with nothing to do: replay only where examples are saved.
    if replay is not None and _has_saved_examples(replay, database_key(machine)):
        _run_machine(machine, settings=replay)
    _run_machine(machine, settings=settings)


def replay_first(settings: Settings) -> Settings | None:
    """Settings that replay (and shrink) only the saved examples, at the step count a
    fuzzing session records with, where `settings` would cut a saved program short of its
    failure; None where nothing would be cut. The run's own generation keeps its own step
    count, so what `ci` finds by itself does not change."""
    steps = PROFILES[FUZZ].stateful_step_count
    if (
        settings.database is None
        or Phase.reuse not in settings.phases
        or settings.stateful_step_count >= steps
    ):
        return None
    return Settings(settings, phases=(Phase.reuse, Phase.shrink), stateful_step_count=steps)


def _has_saved_examples(settings: Settings, key: bytes) -> bool:
    database = settings.database
    return database is not None and next(iter(database.fetch(key)), None) is not None
