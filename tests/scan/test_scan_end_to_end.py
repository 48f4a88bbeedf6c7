"""The product layer on the real rule engine: baseline, suppressions, canary, SARIF, jobs."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from harness.cli import main

REGISTRY = '''\
import asyncio


class Registry:
    instances = {}

    def start(self, loop):
        asyncio.create_task(self.pump())

    async def pump(self):
        pass


def answer(d):
    return DeliveryFailure(d)


def guarded(d):
    if d.may_answer():
        return DeliveryFailure(d)
'''

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.harness]\npaths = ['src']\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "registry.py").write_text(REGISTRY)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def scan_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, object]]:
    capsys.readouterr()
    code = main(["scan", "--format", "json", *args])
    document: dict[str, object] = json.loads(capsys.readouterr().out)
    return code, document


def rules_of(document: dict[str, object]) -> list[tuple[str, int]]:
    findings = document["findings"]
    assert isinstance(findings, list)
    return [(f["rule"], f["line"]) for f in findings]


def test_findings_jobs_and_cache_agree(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, cold = scan_json(capsys)
    assert code == 1
    assert rules_of(cold) == [("MESH005", 5), ("MESH004", 8), ("MESH001", 15)]
    _, two = scan_json(capsys, "--jobs", "2", "--no-cache")
    _, warm = scan_json(capsys)
    assert cold["findings"] == two["findings"] == warm["findings"]
    assert warm["stats"] == {**warm["stats"], "cached": 1}  # type: ignore[dict-item]


def test_baseline_survives_edits_around_real_findings(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = repo / "src" / "registry.py"
    assert main(["scan", "--baseline", "base.json", "--update-baseline"]) == 0
    # Lines inserted above every finding: still all baselined.
    source.write_text('"""Registry."""\n\nimport os\n\n' + REGISTRY)
    code, document = scan_json(capsys, "--baseline", "base.json")
    assert (code, document["findings"], document["errors"]) == (0, [], [])
    # A second class-level dict is new.
    second = "    instances = {}\n    by_name = {}\n"
    source.write_text(REGISTRY.replace("    instances = {}\n", second))
    code, document = scan_json(capsys, "--baseline", "base.json")
    assert code == 1 and rules_of(document) == [("MESH005", 6)]
    # The original fixed: its entry is stale.
    source.write_text(REGISTRY.replace("    instances = {}\n", "    instances = ()\n"))
    code, document = scan_json(capsys, "--baseline", "base.json")
    errors = document["errors"]
    assert isinstance(errors, list)
    assert code == 1 and [e["kind"] for e in errors] == ["stale-baseline"]


def test_suppressions_on_real_findings(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = repo / "src" / "registry.py"
    source.write_text(REGISTRY.replace(
        "    instances = {}\n",
        "    instances = {}  # harness: allow[MESH005] PROC: one registry per process\n",
    ))
    code, document = scan_json(capsys)
    assert code == 1  # the other two findings remain
    assert rules_of(document) == [("MESH004", 8), ("MESH001", 15)] and document["errors"] == []
    # Without the tag the directive is malformed and the finding stays.
    source.write_text(REGISTRY.replace(
        "    instances = {}\n", "    instances = {}  # harness: allow[MESH005] one per process\n"
    ))
    _, document = scan_json(capsys)
    errors = document["errors"]
    assert isinstance(errors, list)
    assert rules_of(document)[0] == ("MESH005", 5)
    assert [e["kind"] for e in errors] == ["malformed-suppression"]


def test_emit_site_canary_catches_a_matcher_change(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = "[tool.harness]\npaths = ['src']\nexpected_emit_sites = 2\n"
    (repo / "pyproject.toml").write_text(config)
    _, document = scan_json(capsys, "--select", "MESH001")
    assert document["errors"] == []
    # A renamed constructor in the configuration silently matches nothing: the canary fails.
    (repo / "pyproject.toml").write_text(config + "emit_constructors = ['DeliveryFault']\n")
    code, document = scan_json(capsys, "--select", "MESH001")
    assert code == 1 and document["findings"] == []
    errors = document["errors"]
    assert isinstance(errors, list)
    assert [e["kind"] for e in errors] == ["emit-site-count"]


def test_sarif_of_a_real_scan_is_valid(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scan", "--format", "sarif", "--no-cache"]) == 1
    document = json.loads(capsys.readouterr().out)
    jsonschema.Draft4Validator(SCHEMA).validate(document)
    assert [r["ruleId"] for r in document["runs"][0]["results"]] == [
        "MESH005", "MESH004", "MESH001",
    ]
