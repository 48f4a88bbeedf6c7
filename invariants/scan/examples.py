"""A rule's VALID and INVALID examples as tests: each example is scanned as a file of a
tree of its own, with the default options, and the rule must report exactly the lines an
invalid example names and nothing in a valid one. The built-in rules' examples are the
project's tests (tests/scan/test_rule_examples.py); a team rule's run as `pytest -p
harness` items (`harness.scan_items.RuleExampleItem`).
"""

from __future__ import annotations

import dataclasses
import textwrap
from dataclasses import dataclass

from invariants.scan.engine import analyze_source, tree_passes
from invariants.scan.model import Finding, ScanConfig, TeamRules
from invariants.scan.problems import RULE_ERROR, Problem
from invariants.scan.report import finding_line, problem_line
from invariants.scan.rules.spec import Rule


@dataclass(frozen=True, slots=True)
class Example:
    rule: Rule
    valid: bool
    index: int
    source: str
    lines: tuple[int, ...] = ()  # where an invalid example must be reported

    @property
    def name(self) -> str:
        return f"{self.rule.id}-{'valid' if self.valid else 'invalid'}-{self.index}"


def examples(rule: Rule) -> list[Example]:
    """The rule's examples, valid ones first, in the order its record lists them."""
    found = [Example(rule, True, index, source) for index, source in enumerate(rule.valid)]
    found += [Example(rule, False, index, source, tuple(lines))
              for index, (source, lines) in enumerate(rule.invalid)]
    return found


def outcome(example: Example, team: TeamRules) -> tuple[list[Finding], list[str]]:
    """The rule's findings on the example, and what else went wrong there (the file does
    not compile, was not analysed, or the rule raised), with default options and `team`,
    the configuration's team rules, so that a team rule runs."""
    config = ScanConfig(team_rules=team)
    rule = example.rule
    path = "test_example.py" if rule.examples_are_tests else "example.py"
    source = textwrap.dedent(example.source).encode()
    report = analyze_source(path, source, config, is_test=rule.examples_are_tests)
    tree = tree_passes([report], config)
    found = report.findings + tree.findings
    findings = [finding for finding in found if finding.rule == rule.id]
    wrong = [finding_line(finding) for finding in found if finding.rule == "MESH000"]
    wrong += [problem_line(dataclasses.replace(problem, path=problem.path or path))
              for problem in report.problems + tree.problems if _concerns(problem, rule)]
    return findings, wrong


def _concerns(problem: Problem, rule: Rule) -> bool:
    """Another rule's error is its own example's business (see `engine.rule_error`)."""
    return problem.kind != RULE_ERROR or problem.message.startswith(f"{rule.id} ")


def failure(example: Example, team: TeamRules) -> str | None:
    """What is wrong with the example as a test (the report to show), None when it holds."""
    findings, wrong = outcome(example, team)
    found = sorted(finding.line for finding in findings)
    expected = sorted(example.lines)
    if not wrong and (not findings if example.valid else found == expected):
        return None
    kind = "valid" if example.valid else "invalid"
    if wrong:
        head = f"{example.rule.id} {kind} example {example.index} could not be checked"
    elif example.valid:
        head = f"{example.rule.id} reports its valid example {example.index}"
    else:
        head = (f"{example.rule.id} invalid example {example.index}: reported on lines "
                f"{found}, expected {expected}")
    numbered = [f"{number:4} | {line}" for number, line in
                enumerate(textwrap.dedent(example.source).splitlines(), start=1)]
    return "\n".join([head, *map(finding_line, findings), *wrong, "the example:", *numbered])
