"""SARIF 2.1.0 output: valid against the official schema, with line-independent fingerprints."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import scan_stand_in

from harness.cli import main
from invariants.scan.model import Finding
from invariants.scan.problems import Problem
from invariants.scan.rules import RULES
from invariants.scan.sarif import FINGERPRINT_NAME, fingerprints, to_sarif

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())


def validate(document: dict[str, Any]) -> None:
    jsonschema.Draft4Validator(SCHEMA).validate(document)


def finding(line: int, path: str = "pkg/m.py", snippet: str = "x.subscribe(h)") -> Finding:
    return Finding("MESH004", path, line, 5, line, "discarded handle", "C.run", snippet)


def test_document_is_valid_sarif(tmp_path: Path) -> None:
    document = json.loads(
        to_sarif(
            [finding(3), Finding("MESH000", "bad file.py", 1, 1, 1, "cannot parse", "", "")],
            [Problem("pkg/m.py", 2, "unused-suppression", "unused"),
             Problem("", 0, "emit-site-count", "found 1")],
            tmp_path,
        )
    )
    validate(document)
    run = document["runs"][0]
    assert [rule["id"] for rule in run["tool"]["driver"]["rules"]][:2] == ["MESH000", "MESH001"]
    first = run["results"][0]
    assert first["ruleId"] == "MESH004"
    assert run["tool"]["driver"]["rules"][first["ruleIndex"]]["id"] == "MESH004"
    location = first["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "pkg/m.py", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {
        "startLine": 3, "startColumn": 5, "endLine": 3, "snippet": {"text": "x.subscribe(h)"}
    }
    assert run["results"][1]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == (
        "bad%20file.py"
    )
    assert len(run["invocations"][0]["toolExecutionNotifications"]) == 2


def test_the_schema_rejects_a_broken_document(tmp_path: Path) -> None:
    # Negative control: the schema check is alive.
    document = json.loads(to_sarif([finding(3)], [], tmp_path))
    document["runs"][0]["results"][0]["level"] = "fatal"
    with pytest.raises(jsonschema.ValidationError):
        validate(document)
    del document["version"]
    with pytest.raises(jsonschema.ValidationError):
        validate(document)


def test_fingerprints_ignore_lines_but_separate_duplicates() -> None:
    before = fingerprints([finding(3), finding(9)])
    after = fingerprints([finding(13), finding(19)])  # ten lines inserted above both
    assert before == after
    assert len(set(before)) == 2  # equal keys, distinct occurrences
    assert fingerprints([finding(3, path="pkg/other.py")])[0] != before[0]
    assert fingerprints([finding(3, snippet="y.subscribe(h)")])[0] != before[0]


def test_cli_sarif_to_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    scan_stand_in.install(monkeypatch)
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "m.py").write_text("def f():\n    x.subscribe(h)  # flag:MESH004\n")
    monkeypatch.chdir(tmp_path)
    assert main(["scan", "--format", "sarif", "--output", "out.sarif", "--no-cache"]) == 1
    assert capsys.readouterr().out == ""
    document = json.loads((tmp_path / "out.sarif").read_text())
    validate(document)
    result = document["runs"][0]["results"][0]
    assert result["partialFingerprints"][FINGERPRINT_NAME] == fingerprints(
        [Finding("MESH004", "m.py", 2, 5, 2, "", "f", "x.subscribe(h)  # flag:MESH004")]
    )[0]


def test_every_rule_has_metadata(tmp_path: Path) -> None:
    rules = json.loads(to_sarif([], [], tmp_path))["runs"][0]["tool"]["driver"]["rules"]
    assert [rule["id"] for rule in rules] == list(RULES)
    assert [rule["name"] for rule in rules] == list(RULES.values())
    assert all(rule["shortDescription"]["text"] != rule["name"] for rule in rules)
