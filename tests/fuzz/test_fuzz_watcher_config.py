"""Noticing a session's new, fully shrunk failures; the selection passed to workers."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("hypofuzz", reason="needs the fuzz extra: pip install -e '.[fuzz]'")
from hypothesis.database import InMemoryExampleDatabase

from invariants.fuzzing.config import (
    FuzzConfig,
    FuzzConfigError,
    normalise_invariants,
    resolve_factory,
)
from invariants.fuzzing.failures import FailureWatcher, secondary_key
from invariants.fuzzing.selection import build_machines, check_of, database_key, target_name

KEY = b"k" * 48
OTHER = b"o" * 48


def test_a_new_failure_counts_as_soon_as_it_is_saved_shrunk_or_not() -> None:
    database = InMemoryExampleDatabase()
    database.save(KEY, b"old")  # saved by an earlier session
    watcher = FailureWatcher(database, {"INV4": KEY, "INV7": OTHER})
    assert watcher.checks_with_new_failures() == []
    database.save(secondary_key(KEY), b"found")  # found, not shrunk yet
    assert watcher.new_entries("INV4") == {b"found"}
    assert watcher.checks_with_new_failures() == ["INV4"]
    database.save(KEY, b"shrunk")
    assert watcher.saved("INV4") == {b"old", b"found", b"shrunk"}
    assert watcher.new_entries("INV7") == frozenset()


def test_an_old_failure_is_not_new() -> None:
    database = InMemoryExampleDatabase()
    database.save(KEY, b"old")
    database.save(secondary_key(KEY), b"older")
    assert FailureWatcher(database, {"INV4": KEY}).checks_with_new_failures() == []


def test_the_selection_round_trips_through_the_environment() -> None:
    config = FuzzConfig(mutant="M2", invariants=("INV2", "INV4"), database="redis://h:1/0")
    assert FuzzConfig.from_environ(config.to_environ()) == config
    assert FuzzConfig.from_environ({}) == FuzzConfig()


def test_invariant_names_are_normalised_and_checked() -> None:
    assert normalise_invariants(["inv4", "INV2", "inv4"]) == ("INV2", "INV4")
    with pytest.raises(FuzzConfigError, match="INV9"):
        normalise_invariants(["INV9"])


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no_colon", "--adapter: expected 'module:factory'"),
        ("no_such_module_xyz:make", "cannot import module 'no_such_module_xyz'"),
        ("reference_impl.adapter:nothing_here", "has no attribute 'nothing_here'"),
    ],
)
def test_a_bad_adapter_spec_is_named(spec: str, message: str) -> None:
    if ":" not in spec:  # refused when the selection is made, before any worker starts
        with pytest.raises(FuzzConfigError, match=message):
            FuzzConfig(adapter=spec)
    else:
        with pytest.raises(FuzzConfigError, match=message):
            resolve_factory(FuzzConfig(adapter=spec))


def test_a_dotted_factory_loads_in_fuzz_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "dotted_mesh_factory.py").write_text(
        "from reference_impl.adapter import make_adapter\n"
        "class Factory:\n"
        "    @staticmethod\n"
        "    def create(chooser):\n"
        "        return make_adapter(chooser)\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    factory = resolve_factory(FuzzConfig(adapter="dotted_mesh_factory:Factory.create"))
    assert factory.__qualname__ == "Factory.create"


def test_machines_are_keyed_by_check_and_by_mesh() -> None:
    machines = build_machines(FuzzConfig(invariants=("INV4", "INV7")))
    assert [m.__name__ for m in machines.values()] == ["INV4Machine", "INV7Machine"]
    keys = {check: database_key(machine) for check, machine in machines.items()}
    assert len(set(keys.values())) == 2
    # The same check over another mesh has its own key: a failure found there is not
    # replayed (nor deleted as fixed) by a session on this one.
    other = build_machines(FuzzConfig(mutant="M2", invariants=("INV4",)))["INV4"]
    assert other.__name__ == "INV4Machine"
    assert database_key(other) != keys["INV4"]
    assert check_of(f"targets.py::{target_name('INV4')}::runTest") == "INV4"
    assert check_of("targets.py::TestOther::runTest") is None
