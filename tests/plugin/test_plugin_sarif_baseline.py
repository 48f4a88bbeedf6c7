"""SARIF output and the baseline through the plugin.

The finding used is MESH000 (a file that does not parse), so these tests exercise the
plugin's plumbing whatever the other rules find.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from harness.cli import main

SCHEMA = json.loads(
    (Path(__file__).parent.parent / "scan" / "data" / "sarif-schema-2.1.0.json").read_text()
)
TABLE = '[tool.harness]\npaths = ["src"]\ninvariants = []\n'
BROKEN = "def broken(:\n    pass\n"


def _repo(pytester: pytest.Pytester, table: str = TABLE) -> None:
    pytester.makepyprojecttoml(table)
    pytester.makepyfile(**{"src/fine": "VALUE = 1\n", "src/broken": BROKEN})


def test_sarif_lists_the_findings_of_the_run(pytester: pytest.Pytester) -> None:
    _repo(pytester)
    result = pytester.runpytest("-p", "harness", "--harness-sarif", "out/harness.sarif")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines([
        f"SARIF written to {pytester.path / 'out' / 'harness.sarif'}",
        "FAILED src/broken.py::harness-scan - src/broken.py:1:* MESH000 *",
    ])
    document = json.loads((pytester.path / "out" / "harness.sarif").read_text())
    jsonschema.Draft4Validator(SCHEMA).validate(document)
    results = document["runs"][0]["results"]
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])
            for r in results] == [("MESH000", "src/broken.py")]


def test_sarif_of_a_clean_run_has_no_results(pytester: pytest.Pytester) -> None:
    pytester.makepyprojecttoml(TABLE + 'sarif = "harness.sarif"\n')
    pytester.makepyfile(**{"src/fine": "VALUE = 1\n"})
    result = pytester.runpytest("-p", "harness")
    result.assert_outcomes(passed=2)
    document = json.loads((pytester.path / "harness.sarif").read_text())
    assert document["runs"][0]["results"] == []


def test_an_unwritable_sarif_path_is_reported(pytester: pytest.Pytester) -> None:
    _repo(pytester)
    (pytester.path / "blocker").write_text("a file, not a directory\n")
    result = pytester.runpytest("-p", "harness", "--harness-sarif", "blocker/harness.sarif")
    result.stdout.fnmatch_lines(["mesh-harness: cannot write SARIF to *blocker/harness.sarif*"])
    assert result.ret == pytest.ExitCode.USAGE_ERROR


def test_the_baseline_accepts_known_findings_and_reports_stale_ones(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _repo(pytester, TABLE + 'baseline = "harness-baseline.json"\n')
    # Created the way a user creates it: the scan command writes today's findings.
    monkeypatch.chdir(pytester.path)
    assert main(["scan", "--no-cache", "--update-baseline"]) == 0
    entries = json.loads((pytester.path / "harness-baseline.json").read_text())["entries"]
    assert [(e["rule"], e["path"]) for e in entries] == [("MESH000", "src/broken.py")]
    accepted = pytester.runpytest("-p", "harness")
    accepted.assert_outcomes(passed=3)
    accepted.stdout.fnmatch_lines(["scan: 2 file(s), 0 finding(s); 0 suppressed, 1 baselined*"])
    # Fixed: the entry no longer matches anything, and the baseline must shrink.
    (pytester.path / "src" / "broken.py").write_text("def fixed():\n    pass\n")
    stale = pytester.runpytest("-p", "harness")
    stale.assert_outcomes(passed=2, failed=1)
    stale.stdout.fnmatch_lines(
        ["FAILED src/broken.py::harness-scan - src/broken.py error?stale-baseline?*"]
    )
    # Without the baseline the finding fails again: the baseline is what accepted it.
    (pytester.path / "src" / "broken.py").write_text(BROKEN)
    pytester.makepyprojecttoml(TABLE)
    unbaselined = pytester.runpytest("-p", "harness")
    unbaselined.assert_outcomes(passed=2, failed=1)
