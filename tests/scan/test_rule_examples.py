"""Every VALID and INVALID example of every rule, as a test of its own."""

from __future__ import annotations

import textwrap

import pytest

from invariants.scan.engine import analyze_source, tree_passes
from invariants.scan.model import Finding, ScanConfig
from invariants.scan.rules import registered
from invariants.scan.rules.spec import Rule

CONFIG = ScanConfig()


def findings_of(rule: Rule, source: str) -> list[Finding]:
    """Scan one example as a file of its own tree; keep this rule's findings."""
    path = "test_example.py" if rule.examples_are_tests else "example.py"
    report = analyze_source(path, source.encode(), CONFIG, is_test=rule.examples_are_tests)
    found = report.findings + tree_passes([report], CONFIG).findings
    return [f for f in found if f.rule == rule.id]


VALID = [
    pytest.param(rule, source, id=f"{rule.id}-valid-{index}")
    for rule in registered()
    for index, source in enumerate(rule.valid)
]
INVALID = [
    pytest.param(rule, source, lines, id=f"{rule.id}-invalid-{index}")
    for rule in registered()
    for index, (source, lines) in enumerate(rule.invalid)
]


def example_failures(rule: Rule) -> list[str]:
    """What is wrong with a rule's examples as tests: used for rules outside the registry."""
    failures = [
        f"{rule.id} valid example {index} is reported"
        for index, source in enumerate(rule.valid)
        if findings_of(rule, textwrap.dedent(source))
    ]
    for index, (source, lines) in enumerate(rule.invalid):
        found = sorted(f.line for f in findings_of(rule, source))
        if found != sorted(lines):
            failures.append(f"{rule.id} invalid example {index}: lines {found}, not {lines}")
    return failures


@pytest.mark.parametrize(("rule", "source"), VALID)
def test_valid_example_has_no_finding(rule: Rule, source: str) -> None:
    assert findings_of(rule, textwrap.dedent(source)) == []


@pytest.mark.parametrize(("rule", "source", "lines"), INVALID)
def test_invalid_example_is_reported_on_its_lines(
    rule: Rule, source: str, lines: tuple[int, ...]
) -> None:
    found = findings_of(rule, source)
    assert sorted(f.line for f in found) == sorted(lines), found
    for finding in found:
        assert finding.message and finding.column >= 1
        assert finding.snippet  # the stripped source line


def test_every_rule_has_examples_both_ways() -> None:
    ids = [rule.id for rule in registered()]
    assert ids == sorted(set(ids)) and ids[0] == "MESH000"
    for rule in registered():
        assert rule.valid and rule.invalid, rule.id
