"""The baseline: keyed without line numbers, with multiplicity, and it only ever shrinks."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import scan_stand_in

from harness.cli import main
from invariants.scan import baseline
from invariants.scan.model import Finding, ScanConfig
from invariants.scan.problems import STALE_BASELINE

SOURCE = (
    "def handler():\n"
    "    CACHE = {}  # flag:MESH005\n"
    "    other()\n"
)


def finding(line: int, snippet: str = "CACHE = {}", symbol: str = "handler") -> Finding:
    return Finding("MESH005", "m.py", line, 5, line, "msg", symbol, snippet)


def test_key_ignores_line_and_whitespace() -> None:
    assert baseline.key_of(finding(2)) == baseline.key_of(finding(40, "CACHE  =   {}"))
    assert baseline.key_of(finding(2)) != baseline.key_of(finding(2, symbol="other"))


def test_compare_counts_multiplicity() -> None:
    known: Counter[baseline.Key] = Counter({baseline.key_of(finding(1)): 2})
    two = baseline.compare([finding(1), finding(9)], known, ScanConfig(), ["m.py"])
    assert two.new == [] and two.stale == [] and two.baselined == 2
    three = baseline.compare([finding(1), finding(5), finding(9)], known, ScanConfig(), ["m.py"])
    assert [f.line for f in three.new] == [9]  # the one beyond the count is new
    one = baseline.compare([finding(1)], known, ScanConfig(), ["m.py"])
    assert [p.kind for p in one.stale] == [STALE_BASELINE]
    assert one.remaining == Counter({baseline.key_of(finding(1)): 1})


def test_entries_of_unscanned_files_or_disabled_rules_are_not_stale() -> None:
    known: Counter[baseline.Key] = Counter({baseline.key_of(finding(1)): 1})
    elsewhere = baseline.compare([], known, ScanConfig(), ["other.py"])
    disabled = baseline.compare([], known, ScanConfig(ignore=("MESH005",)), ["m.py"])
    assert elsewhere.stale == [] and disabled.stale == []
    assert elsewhere.remaining == known == disabled.remaining


@pytest.mark.parametrize(
    "body",
    ["[]", "{\"version\": 2, \"entries\": []}", "{\"version\": 1}", "not json",
     "{\"version\": 1, \"entries\": [{\"rule\": \"MESH005\", \"count\": 1}]}"],
)
def test_malformed_baseline_is_an_error_naming_the_file(tmp_path: Path, body: str) -> None:
    path = tmp_path / "baseline.json"
    path.write_text(body)
    with pytest.raises(baseline.BaselineError, match=str(path)):
        baseline.load(path)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    scan_stand_in.install(monkeypatch)
    (tmp_path / "pyproject.toml").write_text("[tool.harness]\n")
    (tmp_path / "m.py").write_text(SOURCE)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*args: str) -> int:
    return main(["scan", "--no-cache", "--format", "json", *args])


def test_cli_lifecycle(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = repo / "baseline.json"
    # Missing baseline without --update-baseline: a usage error, nothing created.
    assert run("--baseline", "baseline.json") == 2
    assert "baseline not found" in capsys.readouterr().err
    assert not path.exists()
    # The explicit way to create it.
    assert run("--baseline", "baseline.json", "--update-baseline") == 0
    entries = json.loads(path.read_text())["entries"]
    assert entries == [{"rule": "MESH005", "path": "m.py", "symbol": "handler",
                        "snippet": "CACHE = {} # flag:MESH005", "count": 1}]
    capsys.readouterr()

    # Lines inserted above the finding: still matched.
    (repo / "m.py").write_text("import os\n\n\n" + SOURCE)
    assert run("--baseline", "baseline.json") == 0
    capsys.readouterr()

    # A new finding fails, and --update-baseline does not add it.
    (repo / "m.py").write_text(SOURCE + "def g():\n    X = []  # flag:MESH005\n")
    assert run("--baseline", "baseline.json") == 1
    report = json.loads(capsys.readouterr().out)
    assert [(f["line"], f["symbol"]) for f in report["findings"]] == [(5, "g")]
    assert run("--baseline", "baseline.json", "--update-baseline") == 1
    assert json.loads(path.read_text())["entries"] == entries
    capsys.readouterr()

    # The old finding fixed: reported as stale (exit 1) until the baseline is shrunk.
    (repo / "m.py").write_text("def handler():\n    other()\n")
    assert run("--baseline", "baseline.json") == 1
    report = json.loads(capsys.readouterr().out)
    assert report["findings"] == []
    assert [e["kind"] for e in report["errors"]] == [STALE_BASELINE]
    assert run("--baseline", "baseline.json", "--update-baseline") == 0
    assert json.loads(path.read_text())["entries"] == []
    assert run("--baseline", "baseline.json") == 0


def test_cli_baseline_from_config_and_bad_file(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "pyproject.toml").write_text("[tool.harness]\nbaseline = 'base.json'\n")
    (repo / "base.json").write_text("{broken")
    assert run() == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "base.json" in err and "not valid JSON" in err


def test_update_without_baseline_is_a_usage_error(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("--update-baseline") == 2
    assert "--update-baseline needs --baseline" in capsys.readouterr().err


def test_write_initial_refuses_to_overwrite(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    assert baseline.write_initial(path, [finding(1), finding(2)]) == 2
    with pytest.raises(baseline.BaselineError, match="only shrink"):
        baseline.write_initial(path, [])
    assert baseline.load(path) == Counter({baseline.key_of(finding(1)): 2})


def test_a_missing_baseline_fails_before_scanning(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["scan", "--baseline", "nope.json"]) == 2
    assert "nope.json: baseline not found" in capsys.readouterr().err
    assert not (repo / ".harness-cache").exists()  # nothing was scanned
    assert main(["scan"]) == 1  # control: the same tree scanned does write the cache
    assert (repo / ".harness-cache").exists()
