"""A rule id is checked in one place (`invariants.scan.rules.rule_ids`), wherever it is
given: the command line, `[tool.harness]`, a suppression, a baseline entry. Each names an
unknown id as it was written, with where it came from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.settings import rule_ids as option_rule_ids
from invariants.scan.baseline import BaselineError, load
from invariants.scan.config import ConfigError, settings_from_table
from invariants.scan.problems import Problem
from invariants.scan.rules import RULES, UnknownRule, rule_ids
from invariants.scan.suppress import parse_directive

KNOWN = f"(known: {', '.join(RULES)})"


def test_ids_are_stripped_upper_cased_and_kept_in_order() -> None:
    assert rule_ids(["mesh004", " MESH001 ", ""]) == ("MESH004", "MESH001")
    assert rule_ids([]) == ()
    with pytest.raises(UnknownRule) as caught:
        rule_ids(["MESH001", " mesh9 "])
    assert caught.value.rule == "mesh9"
    assert str(caught.value) == f"unknown rule id 'mesh9' {KNOWN}"


def test_the_one_check_names_where_the_id_came_from_and_may_require_one() -> None:
    with pytest.raises(UnknownRule) as caught:
        rule_ids(["mesh9"], "--select")
    assert (caught.value.rule, caught.value.origin) == ("mesh9", "--select")
    assert str(caught.value) == f"--select: unknown rule id 'mesh9' {KNOWN}"
    assert rule_ids([" ", ""], "--select") == ()
    with pytest.raises(UnknownRule) as nothing:
        rule_ids([" ", ""], "--select", required=True)
    assert str(nothing.value) == f"--select: unknown rule id ' ,' {KNOWN}"
    assert rule_ids(["mesh001"], "--select", required=True) == ("MESH001",)


def test_every_place_a_rule_id_is_given_names_it_the_same_way(tmp_path: Path) -> None:
    line = f"unknown rule id 'mesh9' {KNOWN}"
    with pytest.raises(ConfigError) as option:
        option_rule_ids("--select", ["MESH001", "mesh9"])
    assert str(option.value) == f"--select: {line}"

    pyproject = tmp_path / "pyproject.toml"
    with pytest.raises(ConfigError) as table:
        settings_from_table({"ignore": ["mesh9"]}, pyproject)
    assert str(table.value) == f"{pyproject}: [tool.harness] ignore: {line}"

    directive = parse_directive("m.py", 3, "# harness: allow[MESH001, mesh9] reason")
    assert directive == Problem("m.py", 3, "malformed-suppression",
                                "malformed suppression: unknown rule id 'mesh9'")

    baseline = tmp_path / "baseline.json"
    entry = {"rule": "mesh9", "path": "m.py", "symbol": "f", "snippet": "x()", "count": 1}
    baseline.write_text(json.dumps({"version": 1, "entries": [entry]}), encoding="utf-8")
    with pytest.raises(BaselineError) as saved:
        load(baseline)
    assert str(saved.value) == f"{baseline}: baseline entries[0]: {line}"


def test_a_known_id_is_accepted_in_any_case_everywhere(tmp_path: Path) -> None:
    assert option_rule_ids("--ignore", ["mesh005"]) == ("MESH005",)
    pyproject = tmp_path / "pyproject.toml"
    assert settings_from_table({"select": ["mesh001"]}, pyproject).config.select == ("MESH001",)
    directive = parse_directive("m.py", 1, "# harness: allow[mesh004] the reason")
    assert not isinstance(directive, Problem) and directive is not None
    assert directive.rules == ("MESH004",)
    baseline = tmp_path / "baseline.json"
    entry = {"rule": "MESH001", "path": "m.py", "symbol": "f", "snippet": "x()", "count": 2}
    baseline.write_text(json.dumps({"version": 1, "entries": [entry]}), encoding="utf-8")
    assert list(load(baseline).values()) == [2]
