"""A rule is one file plus one registry line: a throwaway rule (MESH900) registered that way
shows up in every output format, in configuration validation and in the examples-as-tests;
without its registry line it shows up nowhere (the negative control)."""

from __future__ import annotations

import ast
import dataclasses
import json
from pathlib import Path

import pytest
from test_rule_examples import example_failures

from invariants.scan import rules as registry
from invariants.scan.config import ConfigError, load_config
from invariants.scan.model import ScanConfig
from invariants.scan.report import to_json, to_text
from invariants.scan.rules import RULES
from invariants.scan.rules.spec import Rule
from invariants.scan.runner import scan
from invariants.scan.sarif import to_sarif
from invariants.scan.suppress import parse_directive

THROWAWAY = "mesh900_throwaway"  # tests/scan is on sys.path


@pytest.fixture
def with_throwaway(monkeypatch: pytest.MonkeyPatch) -> Rule:
    # The one registry line: the module's name appended to RULE_MODULES.
    rules = registry.load((*registry.RULE_MODULES, THROWAWAY))
    monkeypatch.setattr(registry, "ALL_RULES", rules)
    return rules[-1]


def tree(tmp_path: Path) -> Path:
    (tmp_path / "app.py").write_text("def main():\n    print('hi')\n    echo('hi')\n")
    return tmp_path


def write_config(tmp_path: Path, body: str) -> Path:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(f"[tool.harness]\n{body}\n", encoding="utf-8")
    return pyproject


def test_registered_rule_is_in_every_output(with_throwaway: Rule, tmp_path: Path) -> None:
    result = scan(["."], ScanConfig(), root=tree(tmp_path), jobs=1, cache_dir=None)
    assert [(f.rule, f.line) for f in result.findings] == [("MESH900", 2)]
    assert "app.py:2:5 MESH900 print() in production code" in to_text(
        result.findings, result.errors, result.stats
    )
    document = json.loads(to_json(result.findings, result.errors, result.stats))
    assert [f["rule"] for f in document["findings"]] == ["MESH900"]
    run = json.loads(to_sarif(result.findings, result.errors, tmp_path))["runs"][0]
    listed = run["tool"]["driver"]["rules"]
    assert listed[-1]["id"] == "MESH900" and listed[-1]["name"] == "print-call"
    assert listed[-1]["shortDescription"]["text"] == with_throwaway.summary
    assert run["results"][0]["ruleIndex"] == len(listed) - 1
    assert RULES["MESH900"] == "print-call"


def test_registered_rule_options_are_validated(
    with_throwaway: Rule, tmp_path: Path
) -> None:
    config = load_config(write_config(tmp_path, "forbidden_calls = ['echo']\nselect = ['MESH900']"))
    result = scan(["."], config, root=tree(tmp_path), jobs=1, cache_dir=None)
    assert [(f.rule, f.line) for f in result.findings] == [("MESH900", 3)]
    with pytest.raises(ConfigError, match=r"forbidden_calls: expected an array of strings"):
        load_config(write_config(tmp_path, "forbidden_calls = 3"))
    with pytest.raises(ConfigError, match=r"did you mean 'forbidden_calls'"):
        load_config(write_config(tmp_path, "forbidden-calls = ['echo']"))


def test_registered_rule_examples_run_as_tests(with_throwaway: Rule) -> None:
    assert example_failures(with_throwaway) == []
    # negative control: an example that lies is caught
    lying = dataclasses.replace(with_throwaway, valid=("print(1)\n",), invalid=(("x = 1\n", (1,)),))
    assert len(example_failures(lying)) == 2


def test_registered_rule_can_be_suppressed(with_throwaway: Rule) -> None:
    suppression = parse_directive("a.py", 1, "# harness: allow[MESH900] demo")
    assert suppression is not None and getattr(suppression, "rules", None) == ("MESH900",)


def test_without_its_registry_line_the_rule_is_unknown(tmp_path: Path) -> None:
    assert "MESH900" not in RULES
    with pytest.raises(ConfigError, match="forbidden_calls: unknown key"):
        load_config(write_config(tmp_path, "forbidden_calls = ['echo']"))
    with pytest.raises(ConfigError, match="unknown rule id 'MESH900'"):
        load_config(write_config(tmp_path, "select = ['MESH900']"))
    result = scan(["."], ScanConfig(), root=tree(tmp_path), jobs=1, cache_dir=None)
    assert result.findings == []
    suppression = parse_directive("a.py", 1, "# harness: allow[MESH900] demo")
    assert getattr(suppression, "kind", None) == "malformed-suppression"


def test_registry_records_are_consistent() -> None:
    rules = registry.registered()
    ids = [rule.id for rule in rules]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert len({rule.slug for rule in rules}) == len(rules)
    keys = [option.key for rule in rules for option in rule.options]
    assert len(set(keys)) == len(keys)  # one key, one rule
    fields = {field.name for field in dataclasses.fields(ScanConfig)}
    assert not fields & set(keys)
    for module, rule in zip(registry.RULE_MODULES, rules, strict=True):
        assert rule.id.lower() in module  # the module is named after its rule


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return found


RULE_FREE = ("engine.py", "runner.py", "analysis.py", "context.py", "sarif.py", "config.py")
SCAN = Path(registry.__file__).parents[1]


def _rule_imports(path: Path) -> set[str]:
    """Rule modules (not the registry, not `spec`) that `path` imports."""
    return {m for m in _imported_modules(path) if m.startswith("invariants.scan.rules.mesh")}


@pytest.mark.parametrize("name", RULE_FREE)
def test_the_engine_knows_rules_only_through_the_registry(name: str) -> None:
    assert _rule_imports(SCAN / name) == set()


def test_the_import_check_sees_a_rule_import() -> None:
    # negative control: the MESH001 package imports its own modules, and the check sees them
    found = _rule_imports(SCAN / "rules" / "mesh001" / "__init__.py")
    assert "invariants.scan.rules.mesh001.emits" in found


def test_every_rule_option_is_documented() -> None:
    table = (SCAN.parents[1] / "docs" / "scanning.md").read_text(encoding="utf-8")
    keys = [option.key for rule in registry.registered() for option in rule.options]
    assert [key for key in keys if f"| `{key}` |" not in table] == []
    assert "| `forbidden_calls` |" not in table  # negative control: the throwaway's key
