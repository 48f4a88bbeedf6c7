"""A state machine's example-database key depends on the mesh it drives.

A failure saved for one mesh (here mutant M2, on INV4) is replayed by a run on that mesh
and by no run on another: the reference mesh neither replays it nor deletes it as
fixed. The negative control gives the reference M2's identity, which is what an unkeyed
machine amounts to: the reference then replays M2's failure, sees it pass and deletes it.
"""

from __future__ import annotations

import functools
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import Phase, settings
from hypothesis.database import DirectoryBasedExampleDatabase, ReadOnlyDatabase
from hypothesis.stateful import run_state_machine_as_test

from invariants.adapter import AdapterFactory, Chooser, MeshAdapter
from invariants.aio import AsyncMeshAdapter
from invariants.checks import DEFAULT_PARAMS, CheckParams
from invariants.dynamic.judge import recording
from invariants.dynamic.mesh_keys import (
    MESH_ID_ATTRIBUTE,
    database_key,
    key_digest,
    keyed_machine_class,
    mesh_id,
)
from invariants.dynamic.plans import machine_class
from invariants.dynamic.profiles import CI, profile
from invariants.dynamic.runner import run_invariant
from invariants.fuzzing.config import FuzzConfig, mutant_factory
from invariants.fuzzing.failures import FailureWatcher, collect_failures
from invariants.fuzzing.mutant_adapters import __getattr__ as mutant_adapter
from invariants.fuzzing.selection import build_machines
from invariants.mutants.build import PACKAGE_PREFIX
from reference_impl.adapter import make_adapter

REFERENCE = "reference_impl.adapter:make_adapter"
_run_machine = cast(Callable[..., None], run_state_machine_as_test)


def _named(factory: AdapterFactory, name: str) -> AdapterFactory:
    """The same mesh under another identity."""

    def renamed(chooser: Chooser) -> MeshAdapter:
        return factory(chooser)

    setattr(renamed, MESH_ID_ATTRIBUTE, name)
    return renamed


def _local_factory(chooser: Chooser) -> MeshAdapter:
    return make_adapter(chooser)


def test_a_mesh_is_named_by_its_factory_or_its_mutant() -> None:
    assert mesh_id(make_adapter) == REFERENCE
    assert mesh_id(_local_factory) == "test_fuzz_mesh_keys:_local_factory"
    # `--mutant M2` and `--adapter invariants.fuzzing.mutant_adapters:M2` are one mesh.
    m2 = mutant_factory("M2")
    assert m2.__module__.startswith(PACKAGE_PREFIX + "m2_")
    assert mesh_id(m2) == mesh_id(mutant_adapter("M2")) == "mutant:M2"
    assert mesh_id(mutant_factory("resend-timeouts")) == "mutant:M2"
    assert mesh_id(mutant_factory("M3")) == "mutant:M3"
    # A factory may name its mesh, e.g. where a partial's name says nothing.
    assert mesh_id(_named(make_adapter, " mymesh ")) == "mymesh"
    assert mesh_id(functools.partial(make_adapter)) == "functools:partial"


def test_keys_differ_by_mesh_and_agree_across_every_way_of_naming_it() -> None:
    def inv4(config: FuzzConfig) -> bytes:
        return database_key(build_machines(config)["INV4"])

    reference = inv4(FuzzConfig(invariants=("INV4",)))
    m2 = inv4(FuzzConfig(mutant="M2", invariants=("INV4",)))
    m2_by_spec = inv4(
        FuzzConfig(adapter="invariants.fuzzing.mutant_adapters:M2", invariants=("INV4",))
    )
    assert reference != m2 == m2_by_spec
    assert reference == database_key(keyed_machine_class("INV4", make_adapter))
    assert reference != database_key(keyed_machine_class("INV7", make_adapter))
    # The control: without the mesh in the key both meshes share one key.
    assert database_key(machine_class("INV4", make_adapter)) == database_key(
        machine_class("INV4", mutant_factory("M2"))
    )


def test_figures_other_than_the_seeds_are_part_of_the_key() -> None:
    def inv4(config: FuzzConfig) -> bytes:
        return database_key(build_machines(config)["INV4"])

    seeds = inv4(FuzzConfig(invariants=("INV4",)))
    strict = CheckParams(delivery_retries=2)
    fuzzed = inv4(FuzzConfig(invariants=("INV4",), params=strict))
    assert fuzzed != seeds
    # What a worker builds from its environment, and what `check` and `pytest -p harness`
    # (`keyed_machine_class(params=...)`) build: one key.
    worker = FuzzConfig.from_environ(FuzzConfig(invariants=("INV4",), params=strict).to_environ())
    assert worker.params == strict
    assert inv4(worker) == fuzzed
    assert fuzzed == database_key(keyed_machine_class("INV4", make_adapter, params=strict))
    # Another figure, another key; the seeds' figures given explicitly: the key of none.
    assert fuzzed != inv4(FuzzConfig(invariants=("INV4",),
                                     params=CheckParams(delivery_retries=3)))
    assert seeds == inv4(FuzzConfig(invariants=("INV4",), params=DEFAULT_PARAMS))
    assert seeds == database_key(keyed_machine_class("INV4", make_adapter,
                                                     params=CheckParams()))


def _behaviours(runner: Callable[[AdapterFactory], dict[str, int]]) -> list[dict[str, int]]:
    return [runner(make_adapter), runner(_named(make_adapter, "a copy of the reference"))]


@pytest.mark.slow
def test_a_derandomized_run_tries_the_same_programs_on_every_mesh() -> None:
    def keyed(factory: AdapterFactory) -> dict[str, int]:
        return dict(run_invariant("INV4", factory, CI, seed_scenarios=False).behaviours)

    def seeded_by_key(factory: AdapterFactory) -> dict[str, int]:
        machine = keyed_machine_class("INV4", factory, seed_scenarios=False)
        with recording() as stats:
            _run_machine(machine, settings=profile(CI))  # Hypothesis' own seed: the key
        return dict(stats.behaviours)

    same_mesh_twice = _behaviours(keyed)
    assert same_mesh_twice[0] and same_mesh_twice[0] == same_mesh_twice[1]
    # The control: seeded by the (mesh-dependent) key, the two runs draw differently.
    by_key = _behaviours(seeded_by_key)
    assert by_key[0] != by_key[1]


def _saving(database: Any, examples: int | None = None) -> settings:
    """`ci` with a writable database, replaying it first; still derandomized."""
    ci = profile(CI)
    return settings(ci, database=database, phases=(Phase.reuse, *ci.phases),
                    max_examples=examples or ci.max_examples)


def _replay_only(database: Any) -> settings:
    return settings(profile(CI), database=database, phases=(Phase.reuse,))


@pytest.fixture(scope="module")
def m2_failure(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory database holding the INV4 failure found on mutant M2."""
    directory = tmp_path_factory.mktemp("m2-db")
    # With a database `ci` draws differently (it keeps a Pareto front); 200 examples find
    # the bug by search alone (the seed programs would find it without saving anything).
    saving = _saving(DirectoryBasedExampleDatabase(directory), examples=200)
    outcome = run_invariant("INV4", mutant_factory("M2"), saving, seed_scenarios=False)
    assert outcome.verdict == "violation", outcome.failure_text
    return directory


def _m2_entries(directory: Path) -> set[bytes]:
    key = database_key(keyed_machine_class("INV4", mutant_factory("M2")))
    return set(DirectoryBasedExampleDatabase(directory).fetch(key))


def _copy(source: Path, target: Path) -> Path:
    shutil.copytree(source, target)
    return target


@pytest.mark.slow
def test_the_failure_is_replayed_on_its_own_mesh(m2_failure: Path, tmp_path: Path) -> None:
    assert _m2_entries(m2_failure)
    database = ReadOnlyDatabase(DirectoryBasedExampleDatabase(m2_failure))
    replayed = run_invariant("INV4", mutant_factory("M2"), _replay_only(database),
                             seed_scenarios=False)
    assert replayed.verdict == "violation", replayed.failure_text
    # The control: with nothing saved, a replay-only run has nothing to run.
    empty = DirectoryBasedExampleDatabase(tmp_path / "empty")
    control = run_invariant("INV4", mutant_factory("M2"), _replay_only(empty),
                            seed_scenarios=False)
    assert control.verdict != "violation"
    assert "run no examples" in (control.failure_text or "")


@pytest.mark.slow
def test_another_mesh_neither_replays_nor_deletes_it(m2_failure: Path, tmp_path: Path) -> None:
    directory = _copy(m2_failure, tmp_path / "db")
    saved = _m2_entries(directory)
    outcome = run_invariant("INV4", make_adapter, _saving(DirectoryBasedExampleDatabase(
        directory)), seed_scenarios=False)
    # Nothing replayed fails here. (The drawn rules alone, under a database, may reach no
    # timeout at all: then the verdict is "not exercised", still no violation.)
    assert outcome.verdict in ("pass", "not exercised"), outcome.failure_text
    assert not outcome.violations
    assert _m2_entries(directory) == saved
    # A fuzzing session's replay of saved failures on the reference finds none either.
    machines = build_machines(FuzzConfig(invariants=("INV4",)))
    database = DirectoryBasedExampleDatabase(directory)
    watcher = FailureWatcher(database, {"INV4": database_key(machines["INV4"])})
    assert collect_failures(watcher, machines) == []
    assert _m2_entries(directory) == saved


@pytest.mark.slow
def test_control_the_reference_under_m2s_key_deletes_its_failure(
    m2_failure: Path, tmp_path: Path
) -> None:
    directory = _copy(m2_failure, tmp_path / "db")
    assert _m2_entries(directory)
    as_m2 = _named(make_adapter, "mutant:M2")
    outcome = run_invariant("INV4", as_m2, _saving(DirectoryBasedExampleDatabase(directory)),
                            seed_scenarios=False)
    assert outcome.passed, outcome.failure_text
    assert _m2_entries(directory) == set()  # replayed, passed, dropped as fixed



class _OnTheLoop(AsyncMeshAdapter):
    """A mesh on the asyncio kit's virtual loop (no hubs: only its key is read)."""


def _on_the_loop(chooser: Chooser) -> _OnTheLoop:
    return _OnTheLoop(chooser)


def test_a_mesh_on_the_virtual_loop_is_keyed_by_the_python_version() -> None:
    """Its schedules are not portable across Python versions: a failure saved on one is
    neither replayed nor deleted as fixed on another. The control: the reference mesh's
    key names no version."""
    version = f"python:{sys.version_info.major}.{sys.version_info.minor}".encode()
    digest = "_hypothesis_internal_add_digest"  # what Hypothesis adds to the key
    on_the_loop = getattr(keyed_machine_class("INV1", _on_the_loop), digest)
    reference = getattr(keyed_machine_class("INV1", make_adapter), digest)
    assert on_the_loop.endswith(b"\0" + version)
    assert b"python:" not in reference
    assert key_digest(_on_the_loop, portable=False) != key_digest(_on_the_loop)
