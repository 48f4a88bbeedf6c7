"""SARIF 2.1.0 output for code-scanning services.

Each result carries a `partialFingerprints` entry derived from the baseline key (rule, path,
enclosing symbol, normalised source line) plus its occurrence number among equal keys, never
from the line number, so a finding keeps its identity when code moves around it.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from urllib.parse import quote

from invariants.scan.baseline import key_of
from invariants.scan.model import Finding
from invariants.scan.problems import Problem
from invariants.scan.rules import registered
from invariants.scan.rules.spec import Rule
from invariants.scan.runner import finding_order

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
FINGERPRINT_NAME = "meshHarness/v1"

def _tool_version() -> str:
    try:
        return version("mesh-harness")
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "0+unknown"


def fingerprints(findings: Sequence[Finding]) -> list[str]:
    """A stable fingerprint per finding, in the order given."""
    seen: Counter[tuple[str, str, str, str]] = Counter()
    ordered = sorted(range(len(findings)), key=lambda index: finding_order(findings[index]))
    result = [""] * len(findings)
    for index in ordered:
        key = key_of(findings[index])
        occurrence = seen[key]
        seen[key] += 1
        text = "\x00".join((*key, str(occurrence)))
        result[index] = hashlib.sha256(text.encode()).hexdigest()
    return result


def _descriptor(rule: str, slug: str, summary: str) -> dict[str, object]:
    return {
        "id": rule,
        "name": slug,
        "shortDescription": {"text": summary},
        "defaultConfiguration": {"level": "error"},
        "properties": {"tags": ["architecture"]},
    }


def _rules(rules: Sequence[Rule], findings: Sequence[Finding]) -> list[dict[str, object]]:
    """The rules' metadata; a finding of a rule not given (a team rule, when the caller
    did not pass the scan's `rules`) still gets an entry, so no result is ever dropped."""
    listed = [_descriptor(rule.id, rule.slug, rule.summary) for rule in rules]
    known = {rule.id for rule in rules}
    for rule in sorted({finding.rule for finding in findings} - known):
        listed.append(_descriptor(rule, rule.lower(), f"{rule} (a rule of the repository)"))
    return listed


def _location(
    path: str, line: int, column: int = 0, end_line: int = 0, snippet: str = ""
) -> dict[str, object]:
    region: dict[str, object] = {"startLine": max(line, 1)}
    if column:
        region["startColumn"] = column
    if end_line >= max(line, 1):
        region["endLine"] = end_line
    if snippet:
        region["snippet"] = {"text": snippet}
    return {
        "physicalLocation": {
            "artifactLocation": {"uri": quote(path), "uriBaseId": "%SRCROOT%"},
            "region": region,
        }
    }


def to_sarif(
    findings: Sequence[Finding], errors: Sequence[Problem], root: Path,
    rules: Sequence[Rule] | None = None,
) -> str:
    """The SARIF document; `rules`: the scan's rules (`ScanResult.rules`, the team's
    included), default the built-in ones."""
    descriptors = _rules(registered() if rules is None else rules, findings)
    rule_index = {str(rule["id"]): index for index, rule in enumerate(descriptors)}
    results = [
        {
            "ruleId": finding.rule,
            "ruleIndex": rule_index[finding.rule],
            "level": "error",
            "message": {"text": finding.message},
            "locations": [
                _location(finding.path, finding.line, finding.column, finding.end_line,
                          finding.snippet)
            ],
            "partialFingerprints": {FINGERPRINT_NAME: fingerprint},
        }
        for finding, fingerprint in zip(findings, fingerprints(findings), strict=True)
    ]
    notifications = [
        {
            "level": "error",
            "message": {"text": problem.message},
            "descriptor": {"id": problem.kind},
            **({"locations": [_location(problem.path, problem.line)]} if problem.path else {}),
        }
        for problem in errors
    ]
    root_uri = root.absolute().as_uri().rstrip("/") + "/"
    document = {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "mesh-harness",
                        "version": _tool_version(),
                        "rules": descriptors,
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": root_uri}},
                "columnKind": "unicodeCodePoints",
                "invocations": [
                    {
                        "executionSuccessful": True,
                        "toolExecutionNotifications": notifications,
                    }
                ],
                "results": results,
            }
        ],
    }
    return json.dumps(document, indent=2) + "\n"
