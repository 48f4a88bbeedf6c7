"""`[tool.harness] rules`: a team's rule records, loaded from its repository. Each way an
entry can be wrong is one line naming the file, the key and the entry; the good entry
(the control of each) loads, with its id, options and select/ignore known to the table."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from team_rule_repo import RULE, Repo, forget_modules, make_repo

from invariants.scan.config import ConfigError, load_config
from invariants.scan.model import ScanConfig, TeamRules
from invariants.scan.rules import rules_of

__all__ = ["forget_modules"]
pytestmark = pytest.mark.usefixtures("forget_modules")


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return make_repo(tmp_path)


def refused(repo: Repo, *specs: str, extra: str = "") -> str:
    """The one line loading the configuration gives, after its file and key."""
    with pytest.raises(ConfigError) as caught:
        load_config(repo.configure(*specs, extra=extra))
    line = str(caught.value)
    assert "\n" not in line
    prefix = f"{repo.pyproject}: [tool.harness] rules: "
    assert line.startswith(prefix), line
    return line.removeprefix(prefix)


def test_the_good_entry_loads_its_record(repo: Repo) -> None:
    config = load_config(repo.pyproject)
    assert [rule.id for rule in config.team_rules.records] == ["TST001"]
    assert config.team_rules.specs == (repo.spec(),)
    assert [rule.id for rule in rules_of(config)][-2:] == ["MESH006", "TST001"]
    assert rules_of(ScanConfig())[-1].id == "MESH006"  # the control: none without the key


def test_a_module_that_does_not_import(repo: Repo) -> None:
    line = refused(repo, f"{repo.package}.nowhere:FORBIDDEN")
    assert line.startswith(f"'{repo.package}.nowhere:FORBIDDEN': cannot import module "
                           f"'{repo.package}.nowhere': No module named '{repo.package}.nowhere'")
    assert f"(searched {repo.root}, then the installed packages)" in line


def test_a_module_that_raises_while_loading(repo: Repo) -> None:
    repo.write_rule("import json\nraise RuntimeError('no config for the rules')\n", "broken")
    line = refused(repo, repo.spec(module="broken"))
    assert line == (f"'{repo.spec(module='broken')}': module '{repo.package}.broken' raised "
                    "while loading: RuntimeError: no config for the rules")


def test_a_module_whose_own_import_fails_is_a_module_that_raises(repo: Repo) -> None:
    repo.write_rule("import not_installed_anywhere\n", "needy")
    line = refused(repo, repo.spec(module="needy"))
    assert "raised while loading: ModuleNotFoundError: No module named " in line


def test_a_module_with_a_syntax_error(repo: Repo) -> None:
    repo.write_rule("def broken(:\n", "typo")
    assert "raised while loading: SyntaxError: " in refused(repo, repo.spec(module="typo"))


def test_an_attribute_that_is_missing_or_not_a_rule(repo: Repo) -> None:
    assert refused(repo, repo.spec("MISSING")) == (
        f"'{repo.spec('MISSING')}': module '{repo.package}.rules' has no attribute 'MISSING'")
    assert refused(repo, repo.spec("check")) == (
        f"'{repo.spec('check')}': is a function, not a rule record (invariants.scan.api.Rule)")


@pytest.mark.parametrize("value", ["'no_colon_here'", "3", "['a:b', 4]", "['a.b:']"])
def test_a_value_that_is_no_spec(repo: Repo, value: str) -> None:
    repo.pyproject.write_text(f"[tool.harness]\nrules = {value}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"\[tool.harness\] rules: "):
        load_config(repo.pyproject)


def test_a_duplicate_id(repo: Repo) -> None:
    repo.write_rule(RULE, "again")
    line = refused(repo, repo.spec(), repo.spec(module="again"))
    assert line == (f"'{repo.spec(module='again')}': duplicate rule id 'TST001' "
                    f"(also '{repo.spec()}')")
    assert "duplicate rule id 'TST001'" in refused(repo, repo.spec(), repo.spec())


@pytest.mark.parametrize(("rule_id", "problem"), [
    ("MESH100", "rule id 'MESH100' has the prefix MESH, which is the harness's own"),
    ("MESH001", "rule id 'MESH001' has the prefix MESH, which is the harness's own"),
    ("tst001", "rule id 'tst001' must be upper-case letters, then digits"),
    ("TST-1", "rule id 'TST-1' must be upper-case letters, then digits"),
])
def test_an_id_the_team_may_not_have(repo: Repo, rule_id: str, problem: str) -> None:
    repo.write_rule(RULE.replace('"TST001"', f'"{rule_id}"'), "named")
    assert refused(repo, repo.spec(module="named")).startswith(
        f"'{repo.spec(module='named')}': {problem}")


def test_an_option_key_another_rule_has(repo: Repo) -> None:
    taken = RULE.replace('"team_forbidden_calls"', '"guard_functions"')
    repo.write_rule(taken, "greedy")
    assert refused(repo, repo.spec(module="greedy")) == (
        f"'{repo.spec(module='greedy')}': option key 'guard_functions' is taken (by MESH001)")


def test_its_options_select_and_ignore_are_keys_of_the_table(repo: Repo) -> None:
    extra = 'team_forbidden_calls = ["banned"]\nselect = ["tst001", "MESH004"]\n'
    config = load_config(repo.configure(repo.spec(), extra=extra))
    assert config.select == ("TST001", "MESH004")
    assert config.options.get("team_forbidden_calls", None) == ("banned",)
    # the control: without the rule, its id and its option are unknown
    repo.pyproject.write_text(f'[tool.harness]\n{extra}', encoding="utf-8")
    with pytest.raises(ConfigError, match="unknown key"):
        load_config(repo.pyproject)
    repo.pyproject.write_text('[tool.harness]\nignore = ["TST001"]\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="ignore: unknown rule id 'TST001'"):
        load_config(repo.pyproject)


def test_modules_are_imported_from_the_pytest_pythonpath_too(repo: Repo) -> None:
    tools = repo.root / "tools"
    tools.mkdir()
    (repo.root / repo.package / "rules.py").rename(tools / f"{repo.package}_tools.py")
    spec = f"{repo.package}_tools:FORBIDDEN"
    assert "cannot import module" in refused(repo, spec)  # the control: not on the path yet
    extra = '[tool.pytest.ini_options]\npythonpath = ["tools"]\n'
    config = load_config(repo.configure(spec, extra=extra))
    assert [rule.id for rule in config.team_rules.records] == ["TST001"]


def test_loading_leaves_sys_path_as_it_was(repo: Repo) -> None:
    import sys

    before = list(sys.path)
    load_config(repo.pyproject)
    assert sys.path == before


def test_the_rules_are_part_of_the_configurations_identity(repo: Repo) -> None:
    first = load_config(repo.pyproject)
    assert load_config(repo.pyproject) == first  # the same source: the same configuration
    assert repr(first.team_rules).startswith(f"TeamRules(['{repo.spec()}'], '")
    repo.write_rule(RULE + "\n# an edit\n")
    edited = load_config(repo.pyproject)
    assert edited != first and repr(edited) != repr(first)
    assert TeamRules() == ScanConfig().team_rules


def test_a_configuration_travels_to_a_fresh_process_by_its_specs(repo: Repo) -> None:
    config = load_config(repo.pyproject)
    copied = pickle.loads(pickle.dumps(config))
    assert copied == config
    assert [rule.id for rule in copied.team_rules.records] == ["TST001"]
