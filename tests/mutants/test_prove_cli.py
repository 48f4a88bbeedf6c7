"""`python -m harness prove`: the matrix as text or JSON, and its exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from harness.cli import main
from harness.jobs.prove import command as prove_command
from invariants.mutants.matrix import Cell, Matrix
from invariants.mutants.render import kill_list_text, matrix_text


def test_prove_json_for_one_mutant_and_two_checks() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "harness", "prove", "--format", "json", "--mutant", "M7",
         "--check", "MESH004", "--check", "mesh005"],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["reference"] == {"MESH004": "pass", "MESH005": "pass"}
    assert data["expected"] == {"M7": ["MESH004"]}
    cells = data["mutants"]["M7"]
    assert cells["MESH004"]["killed"] is True and cells["MESH005"]["killed"] is False
    assert (cells["MESH004"]["examples"], cells["MESH004"]["steps"]) == (0, 0)
    assert isinstance(cells["MESH004"]["seconds"], float)
    assert "M7" in done.stderr  # progress goes to stderr, not into the JSON


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--mutant", "M99"], "unknown mutant 'M99'"),
        (["--profile", "nightly"], "--profile: unknown profile 'nightly'"),
        (["--check", "INV9"], "unknown check(s) ['INV9']"),
        (["--jobs", "-1"], "--jobs: must be 0 (one per core) or more, got -1"),
        (["--mutant", "M1", "--check", "INV1", "--jobs", "-2"],
         "--jobs: must be 0 (one per core) or more, got -2"),
    ],
)
def test_usage_errors_exit_2_with_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["prove", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def _prove(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", "prove", *argv],
                          capture_output=True, text=True, timeout=300, check=False)


def _without_seconds(matrix: dict[str, Any]) -> dict[str, Any]:
    for cells in matrix["mutants"].values():
        for cell in cells.values():
            del cell["seconds"]
    return matrix


@pytest.mark.slow
def test_two_jobs_give_the_matrix_of_one() -> None:
    selection = ["--mutant", "M1", "--mutant", "M2", "--check", "INV1", "--check", "INV2",
                 "--check", "MESH001"]
    runs = {jobs: (_prove("--format", "json", "--jobs", jobs, *selection),
                   _prove("--jobs", jobs, *selection)) for jobs in ("1", "2")}
    for as_json, as_text in runs.values():
        assert as_json.returncode == as_text.returncode == 0, as_json.stderr + as_text.stderr
    serial, parallel = runs["1"], runs["2"]
    assert _without_seconds(json.loads(parallel[0].stdout)) == _without_seconds(
        json.loads(serial[0].stdout))
    # The text table, row for row (only the run's duration in its last line differs).
    assert parallel[1].stdout.splitlines()[:-1] == serial[1].stdout.splitlines()[:-1]
    assert list(json.loads(parallel[0].stdout)["mutants"]) == ["M1", "M2"]
    assert "M1 INV1: killed" in parallel[0].stderr  # each progress line names its subject


@pytest.mark.slow
def test_mutants_built_in_the_workers_give_the_matrix_of_one_job() -> None:
    """Judged by invariants alone, a mutant is built by the worker that runs it (here each
    mutant has two cells, so two workers may build it at once)."""
    from invariants.mutants.matrix import prove

    matrices = {jobs: prove("ci", ["M3", "M9"], checks=["INV1", "INV2"], jobs=jobs).to_json()
                for jobs in (1, 2)}
    assert _without_seconds(matrices[2]) == _without_seconds(matrices[1])
    assert matrices[2]["mutants"]["M3"]["INV2"]["killed"] is True
    assert matrices[2]["mutants"]["M9"]["INV1"]["killed"] is True


@pytest.mark.slow
def test_a_mutant_that_no_longer_applies_in_a_worker_is_an_error() -> None:
    """A mutant whose site is gone: with one job its build fails here, with two in the
    worker; either way the matrix fails, naming the mutant, and its kill is missing."""
    from dataclasses import replace

    from invariants.mutants.matrix import prove
    from invariants.mutants.registry import find_mutant

    gone = replace(find_mutant("M3"), site="Nowhere._retry_or_terminate")
    for jobs in (1, 2):
        matrix = prove("ci", [gone], checks=["INV2"], jobs=jobs)
        assert not matrix.ok and matrix.missing_kills() == [("M3", "INV2")]
        assert len(matrix.errors) == 1 and "mutant M3 unbounded-resubscribe" in matrix.errors[0]
        assert "found 0 time(s)" in matrix.errors[0]


@pytest.mark.slow
def test_a_mutant_judged_by_a_rule_too_that_no_longer_applies_is_one_error() -> None:
    """With workers its cells may run before the scan finds the codemod stale: the matrix
    says so once, as with one job, and leaves its row out."""
    from dataclasses import replace

    from invariants.mutants.matrix import prove
    from invariants.mutants.registry import find_mutant

    gone = replace(find_mutant("M2"), site="Nowhere.resend")
    for jobs in (1, 2):
        matrix = prove("ci", [gone], checks=["MESH003", "INV4"], expected_only=True,
                       jobs=jobs)
        assert matrix.mutants["M2"] == {}
        assert matrix.missing_kills() == [("M2", "MESH003"), ("M2", "INV4")]
        assert len(matrix.errors) == 1 and "mutant M2 resend-timeouts" in matrix.errors[0]
        assert "found 0 time(s)" in matrix.errors[0]


def test_a_mutants_listed_kills_run_before_the_rest_of_its_row() -> None:
    from invariants.mutants.matrix import _Subject, _work_order

    def subject(name: str, checks: tuple[str, ...], expected: tuple[str, ...]) -> _Subject:
        return _Subject(name, None, checks, expected, {}, [])

    deciding, rest = _work_order([
        subject("reference", ("MESH001", "INV1", "INV2"), ()),
        subject("M3", ("MESH001", "INV1", "INV2"), ("INV2",)),
        subject("M4", ("INV1", "INV4"), ("INV4", "MESH002")),
    ])
    assert deciding == [("reference", "INV1"), ("reference", "INV2"), ("M3", "INV2"),
                        ("M4", "INV4")]
    assert rest == [("M3", "INV1"), ("M4", "INV1")]  # guided: after the reference's INV1


def _matrix(*, reference_fails: bool = False, kill: bool = True) -> Matrix:
    dead = Cell(True, 4, 3, 0.5, "INV2: subscription s1 made 7 attempts")
    alive = Cell(False, 60, 0, 1.0)
    return Matrix(
        profile="ci",
        checks=("MESH004", "INV2"),
        reference={"MESH004": alive if not reference_fails else Cell(True, 0, 0, 0.1, "x.py:1"),
                   "INV2": alive},
        mutants={"M3": {"MESH004": alive, "INV2": dead if kill else alive}},
        expected={"M3": ("INV2",)},
        slugs={"M3": "unbounded-resubscribe"},
    )


@pytest.mark.parametrize(
    ("matrix", "code", "says"),
    [
        (_matrix(), 0, "prove: ok"),
        (_matrix(kill=False), 1, "MISSING KILL: M3 survived INV2"),
        (_matrix(reference_fails=True), 1, "reference FAILS MESH004: x.py:1"),
    ],
)
def test_exit_code_follows_the_matrix(
    matrix: Matrix, code: int, says: str,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(prove_command, "prove", lambda *args, **kwargs: matrix)
    assert main(["prove"]) == code
    assert says in capsys.readouterr().out


def test_text_table_marks_listed_kills_and_survivors() -> None:
    lines = matrix_text(_matrix()).splitlines()
    assert lines[0].split() == ["MESH004", "INV2"]
    assert lines[1].split() == ["reference", "pass", "pass"]
    assert lines[2].split() == ["M3", "unbounded-resubscribe", "-", "KILLED", "4ex/3st*"]
    survived = matrix_text(_matrix(kill=False)).splitlines()[2].split()
    assert survived[-1] == "SURVIVED!"


def test_the_kill_list_fits_100_columns_and_names_missing_kills() -> None:
    lines = kill_list_text(_matrix()).splitlines()
    assert lines[0].split() == ["reference", "pass"]
    assert " ".join(lines[1].split()) == "M3 unbounded-resubscribe killed by INV2* (4 ex, 3 st)"
    missed = kill_list_text(_matrix(kill=False)).splitlines()[1]
    assert missed.endswith("killed by nothing; MISSING INV2")
    failing = kill_list_text(_matrix(reference_fails=True)).splitlines()[0]
    assert failing.split() == ["reference", "FAILS", "MESH004"]
    assert all(len(line) <= 100 for line in lines)


def test_a_mutant_that_no_longer_applies_is_reported_and_the_rest_runs() -> None:
    from invariants.mutants.matrix import prove
    from invariants.mutants.patch import Patch

    stale = Patch(id="M99", slug="stale", shape="targets code that is gone", path="breaker.py",
                  site="on_active_stop", before="self.hold_until_drained(done)", after="done()",
                  kills=("MESH004",))
    result = prove("ci", ["M7", stale], checks=["MESH004"])
    assert result.mutants["M7"]["MESH004"].killed
    assert result.mutants["M99"] == {}
    assert result.missing_kills() == [("M99", "MESH004")]
    assert len(result.errors) == 1 and "mutant M99 stale" in result.errors[0]
    assert "breaker.py" in result.errors[0] and not result.ok


def test_a_mesh_that_raises_is_an_error_never_a_kill() -> None:
    from invariants.adapter import Chooser, MeshAdapter
    from invariants.mutants.matrix import dynamic_cell

    def broken_factory(chooser: Chooser) -> MeshAdapter:
        raise RuntimeError("adapter exploded")

    cell = dynamic_cell("INV2", broken_factory, "ci")
    assert not cell.killed and cell.errored
    assert "adapter exploded" in cell.evidence
    failing = Matrix("ci", ("INV2",), {"INV2": cell}, {}, {}, {})
    assert failing.reference_failures() == ["INV2"]
    assert failing.to_json()["reference"] == {"INV2": "fail"}
