"""`python -m harness scan`: formats, exit codes, options, inventory."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import scan_stand_in

from harness.cli import main
from invariants.scan.model import Finding
from invariants.scan.report import finding_line

GUARDED = "def answer(d):\n    if d.may_answer():\n        return DeliveryFailure(d)\n"
UNGUARDED = "def nack(d):\n    x.subscribe(h)  # flag:MESH004\n    return DeliveryFailure(d)\n"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    scan_stand_in.install(monkeypatch)
    (tmp_path / "pyproject.toml").write_text("[tool.harness]\npaths = ['src']\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "guarded.py").write_text(GUARDED)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_clean_tree_exits_0(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scan"]) == 0
    assert capsys.readouterr().out.startswith("0 finding(s), 0 error(s) in 1 file(s)")


def test_findings_exit_1_with_location_and_source_line(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "src" / "nack.py").write_text(UNGUARDED)
    assert main(["scan"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "src/nack.py:2:5 MESH004 flagged MESH004"
    assert lines[1] == "    x.subscribe(h)  # flag:MESH004"


def test_json_has_exactly_the_documented_shape(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "src" / "nack.py").write_text(UNGUARDED + "# harness: allow[MESH006] stale\n")
    assert main(["scan", "--format", "json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert list(document) == ["findings", "errors", "stats"]
    assert document["findings"] == [
        {"rule": "MESH004", "path": "src/nack.py", "line": 2, "column": 5, "end_line": 2,
         "message": "flagged MESH004", "symbol": "nack"}
    ]
    assert document["errors"] == [
        {"kind": "unused-suppression", "path": "src/nack.py", "line": 4,
         "message": "unused suppression: no MESH006 finding on this line"}
    ]
    assert list(document["stats"]) == ["files", "parsed", "cached", "seconds"]
    assert (document["stats"]["files"], document["stats"]["parsed"]) == (2, 2)


def test_paths_on_the_command_line_are_relative_to_cwd(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / "other").mkdir()
    (repo / "other" / "nack.py").write_text(UNGUARDED)
    monkeypatch.chdir(repo / "other")
    assert main(["scan", "nack.py", "--format", "json", "--no-cache"]) == 1
    document = json.loads(capsys.readouterr().out)
    # Reported relative to the scan root (the pyproject's directory), not to the cwd.
    assert [f["path"] for f in document["findings"]] == ["other/nack.py"]


def test_select_ignore_and_their_errors(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "src" / "nack.py").write_text(UNGUARDED)
    assert main(["scan", "--ignore", "mesh004"]) == 0
    assert main(["scan", "--select", "MESH000,MESH004"]) == 1
    capsys.readouterr()
    assert main(["scan", "--select", "MESH001,MESH404"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("mesh-harness scan: error: --select: unknown rule id 'MESH404' (known: ")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--jobs", "-1"], "--jobs: must be 0 or more"),
        (["--config", "nope.toml"], "--config: nope.toml: no such file"),
        (["--output", "missing/dir/out.txt"], "--output: missing/dir/out.txt"),
    ],
)
def test_usage_errors_exit_2_with_one_line(
    repo: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert main(["scan", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err


def test_cache_is_used_by_default_and_no_cache_disables_it(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["scan", "--no-cache"]) == 0
    assert not (repo / ".harness-cache").exists()
    assert main(["scan", "--format", "json"]) == 0
    capsys.readouterr()
    assert main(["scan", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["stats"]["cached"] == 1
    assert (repo / ".harness-cache" / ".gitignore").exists()


def test_inventory_lists_emit_sites_with_guard_status(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "src" / "nack.py").write_text(UNGUARDED)
    assert main(["scan", "--inventory"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "src/guarded.py:3:16 answer guarded (line 2)",
        "src/nack.py:3:12 nack UNGUARDED",
        "2 emit site(s)",
    ]
    assert main(["scan", "--inventory", "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["count"] == 2
    assert document["emit_sites"][0] == {
        "path": "src/guarded.py", "line": 3, "column": 16, "symbol": "answer",
        "guarded": True, "guard_line": 2,
    }


def test_inventory_canary_fails_on_a_count_change(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = "[tool.harness]\npaths = ['src']\nexpected_emit_sites = 1\n"
    (repo / "pyproject.toml").write_text(config)
    assert main(["scan", "--inventory"]) == 0
    assert main(["scan"]) == 0
    (repo / "src" / "nack.py").write_text(UNGUARDED.replace("  # flag:MESH004", ""))
    capsys.readouterr()
    assert main(["scan", "--inventory"]) == 1
    assert "expected_emit_sites = 1" in capsys.readouterr().out
    assert main(["scan"]) == 1
    assert "error[emit-site-count] found 2 emit sites" in capsys.readouterr().out


def test_module_entry_point_runs_in_a_fresh_interpreter(tmp_path: Path) -> None:
    # The real engine, through `python -m harness`: a parse error is a finding (exit 1).
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "bad.py").write_text("def (:\n")
    completed = subprocess.run(
        [sys.executable, "-m", "harness", "scan", "--format", "json", "--no-cache"],
        cwd=tmp_path, capture_output=True, text=True, check=False,
    )
    assert completed.returncode == 1, completed.stderr
    document = json.loads(completed.stdout)
    assert [(f["rule"], f["path"]) for f in document["findings"]] == [("MESH000", "bad.py")]
    (tmp_path / "bad.py").write_text("def f():\n    return 1\n")
    fixed = subprocess.run(
        [sys.executable, "-m", "harness", "scan", "--no-cache"],
        cwd=tmp_path, capture_output=True, text=True, check=False,
    )
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr


def test_the_reference_mesh_scans_clean_with_default_configuration() -> None:
    # The real engine on the project's own reference mesh, with no [tool.harness] table.
    project = Path(__file__).resolve().parents[2]
    completed = subprocess.run(
        [sys.executable, "-m", "harness", "scan", "reference_impl", "--no-cache",
         "--jobs", "2", "--format", "json"],
        cwd=project, capture_output=True, text=True, check=False,
    )
    document = json.loads(completed.stdout)
    assert (completed.returncode, document["findings"], document["errors"]) == (0, [], [])
    assert document["stats"]["files"] == document["stats"]["parsed"] > 0


def test_text_output_cuts_very_long_source_lines() -> None:
    long_line = "x = [" + "1, " * 500 + "]"
    finding = Finding("MESH005", "m.py", 1, 1, 1, "mutable", "", long_line)
    head, source = finding_line(finding).splitlines()
    assert head == "m.py:1:1 MESH005 mutable"
    assert source == "    " + long_line[:157] + "..."
    short = Finding("MESH005", "m.py", 1, 1, 1, "mutable", "", "x = []")
    assert finding_line(short).splitlines()[1] == "    x = []"
