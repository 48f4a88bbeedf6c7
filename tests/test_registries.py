"""Rules, checkers, mutants and commands are registered alike: a tuple of module paths, in
order, each module defining its record beside its code, loaded by `invariants.records`,
which names the module of a missing or mistyped record."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator

import pytest

from harness import cli
from harness.jobs import Command
from invariants import checks, records
from invariants.checks import Check
from invariants.mutants import registry as mutants
from invariants.mutants.base import Mutant
from invariants.scan import rules
from invariants.scan.rules.spec import Rule


@pytest.fixture
def module_named() -> Iterator[types.ModuleType]:
    module = types.ModuleType("registries_stand_in")
    sys.modules[module.__name__] = module
    yield module
    del sys.modules[module.__name__]


def test_every_registry_is_its_modules_records_in_order() -> None:
    assert records.load(rules.RULE_MODULES, "RULE", Rule) == rules.ALL_RULES
    assert records.load(checks.CHECK_MODULES, "check", Check) == checks.CHECK_RECORDS
    assert list(checks.CHECKS) == [record.id for record in checks.CHECK_RECORDS]
    assert list(checks.CHECK_IDS) == [f"INV{i}" for i in range(1, len(checks.CHECK_IDS) + 1)]
    assert records.load(mutants.MUTANT_MODULES, "MUTANT", Mutant) == mutants.MUTANTS
    assert list(cli.COMMANDS.items()) == [
        (cli.command_name(module), module) for module in cli.COMMAND_MODULES]
    subcommands = next(action for action in cli.build_parser()._actions
                       if action.dest == "command")
    assert isinstance(subcommands.choices, dict)
    assert list(subcommands.choices) == list(cli.COMMANDS)


def test_each_id_is_registered_once() -> None:
    for ids in ([r.id for r in rules.ALL_RULES], [c.id for c in checks.CHECK_RECORDS],
                [m.id for m in mutants.MUTANTS], list(cli.COMMANDS)):
        assert len(set(ids)) == len(ids), ids


def test_a_missing_or_mistyped_record_names_its_module(
    module_named: types.ModuleType, monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(TypeError, match=r"^registries_stand_in: MUTANT must be a Mutant record$"):
        records.load(("invariants.mutants.catalogue.m1_payload_type_guard", module_named.__name__),
                     "MUTANT", Mutant)
    monkeypatch.setattr(module_named, "RULE", mutants.MUTANTS[0], raising=False)
    with pytest.raises(TypeError, match=r"^registries_stand_in: RULE must be a Rule record$"):
        rules.load((module_named.__name__,))


def test_a_command_is_its_record_named_as_its_path_says(
    module_named: types.ModuleType, monkeypatch: pytest.MonkeyPatch,
) -> None:
    for module in cli.COMMAND_MODULES:
        record = cli.command_of(module)
        assert record.name == cli.command_name(module)
    path = "harness.jobs.stand_in.command"
    monkeypatch.setitem(sys.modules, path, module_named)
    monkeypatch.setattr(module_named, "COMMAND", Command("other", lambda subparsers: None),
                        raising=False)
    with pytest.raises(TypeError, match=r"COMMAND is named 'other', its path says 'stand-in'"):
        cli.command_of(path)
