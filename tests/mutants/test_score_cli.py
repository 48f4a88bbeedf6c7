"""`python -m harness prove --mutate`: the score of a seeded sample, as JSON, on the bundled
reference mesh and on another repo's mesh through its own adapter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import harness
from invariants.mutants.score.session import parse_verdict

WORKTREE = Path(harness.__file__).resolve().parents[1]
KEYS = {"total", "killed", "survived", "blind", "equivalent", "timeouts", "incompetent", "score",
        "seconds"}


def _prove(cwd: Path, *argv: str, pythonpath: tuple[Path, ...] = ()) -> tuple[Any, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [*(str(p) for p in pythonpath), str(WORKTREE), env.get("PYTHONPATH", "")]
    )
    done = subprocess.run(
        [sys.executable, "-m", "harness", "prove", "--mutate", *argv, "--format", "json"],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=900, check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), done.stderr


def _consistent(data: dict[str, Any]) -> None:
    assert set(data) >= KEYS
    counted = (data["killed"] + len(data["survived"]) + len(data["blind"])
               + len(data["equivalent"]) + len(data["timeouts"]) + len(data["incompetent"]))
    assert counted == data["total"]
    denominator = data["total"] - len(data["equivalent"]) - len(data["incompetent"])
    assert data["score"] == (round(data["killed"] / denominator, 4) if denominator else None)
    assert sum(data["killed_by"].values()) == data["killed"]
    for survivor in [*data["survived"], *data["blind"]]:
        assert {"id", "path", "line", "operator", "occurrence", "diff"} <= set(survivor)
        assert survivor["diff"].startswith("--- a/")
        assert f"@@ -{survivor['line']}" in survivor["diff"] or "@@" in survivor["diff"]


@pytest.mark.slow
def test_a_seeded_sample_of_the_reference_is_scored_and_cached(tmp_path: Path) -> None:
    first, progress = _prove(tmp_path, "--sample", "3", "--seed", "7")
    _consistent(first)
    assert first["mesh"] == "reference_impl" and first["total"] == 3
    assert first["sample"] == 3 and first["seed"] == 7 and first["cached"] == 0
    assert "[3/3]" in progress  # the progress line goes to stderr, not into the JSON
    # The same sample again: the same mutants, every verdict from the cache.
    again, _ = _prove(tmp_path, "--sample", "3", "--seed", "7")
    assert again["cached"] == 3
    for key in ("total", "killed", "killed_by", "kills", "survived", "incompetent", "score"):
        assert again[key] == first[key], key


@pytest.mark.slow
def test_another_repos_mesh_is_mutated_through_its_adapter(tmp_path: Path) -> None:
    sys.path.insert(0, str(WORKTREE / "tests" / "plugin"))
    try:
        import sample_repo
    finally:
        sys.path.pop(0)
    sample_repo.write(tmp_path, fixed=True)
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + 'mutate_paths = ["src/tinymesh/mesh.py"]\n')
    data, _ = _prove(tmp_path, "--sample", "8", "--seed", "0",
                     pythonpath=(tmp_path / "src",))
    _consistent(data)
    assert data["mesh"] == "tinymesh" and data["total"] == 8
    every = [m for key in ("kills", "survived", "incompetent", "timeouts") for m in data[key]]
    assert {m["path"] for m in every} == {"mesh.py"}  # only mutate_paths is mutated
    assert {k["check"] for k in data["kills"]} <= {"INV1", "MESH001", "MESH005", "adapter-check"}
    assert data["killed"] >= 1
    # Cosmic Ray's test command on a worker: the tree as it is on disk, one verdict line.
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path / "src"), str(WORKTREE)]))
    command = [sys.executable, "-m", "harness", "prove", "--mutate", "--in-place"]
    clean = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=600, check=False)
    assert clean.returncode == 0, clean.stderr
    survived = parse_verdict(clean.stdout)
    assert survived is not None and (survived.status, survived.check) == ("survived", "")
    mesh = tmp_path / "src" / "tinymesh" / "mesh.py"
    mesh.write_text(sample_repo.files(fixed=False)["src/tinymesh/mesh.py"])  # the bug back
    buggy = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=600, check=False)
    assert buggy.returncode == 1, buggy.stderr
    verdict = parse_verdict(buggy.stdout)
    assert verdict is not None and verdict.status == "killed" and verdict.phase == "scan"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--sample", "0"], "--sample: must be at least 1"),
        (["--jobs", "-1"], "--jobs: must be 0 (one per core) or more"),
        (["--mutant", "M2"], "are the kill matrix's"),
        (["--check", "INV0"], "--check: unknown invariant 'INV0'"),
        (["--triage", "missing.toml"], "missing.toml: triage file not found"),
    ],
)
def test_usage_errors_exit_2_with_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from harness.cli import main

    assert main(["prove", "--mutate", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ('["nowhere"]', "mutate_paths: 'nowhere': no such file or directory"),
        ("3", "mutate_paths: expected a string or an array of strings, got 3"),
        ('[""]', "mutate_paths: expected non-empty paths"),
        ('["tests"]', "tests: not inside a package"),  # exists; checked when the run starts
    ],
)
def test_a_bad_mutate_paths_value_names_the_file_and_key(
    value: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from harness.cli import main

    (tmp_path / "tests").mkdir()
    (tmp_path / "pyproject.toml").write_text(f"[tool.harness]\nmutate_paths = {value}\n")
    monkeypatch.chdir(tmp_path)
    assert main(["prove", "--mutate"]) == 2
    err = capsys.readouterr().err.strip()
    assert "pyproject.toml: [tool.harness] mutate_paths" in err and message in err
    assert len(err.splitlines()) == 1
