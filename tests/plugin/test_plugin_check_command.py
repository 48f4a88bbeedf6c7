"""`python -m harness check`: the report and its exit codes.

The full job (with the kill matrix) takes minutes; here it runs narrowed to INV1 without
the mutants, on the reference mesh (passes) and, as the negative control, with the
reference's adapter swapped for the sample repo's tiny mesh that answers rejections.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import sample_repo

from harness.cli import main


def test_the_reference_passes_and_the_report_says_so(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["check", "--no-prove", "--invariants", "INV1", "--quiet"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "1. Static scan: pass" in out
    assert "2. Dynamic invariants on the reference mesh: pass (1 of 1 passed)" in out
    assert "   INV1 rejection is terminal  pass" in out
    assert "3. Kill matrix: not run (--no-prove)" in out
    assert out.rstrip().endswith("Result: PASS")


@pytest.mark.slow
def test_the_json_report_carries_the_same_verdicts(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", "--no-prove", "--invariants", "INV1", "--quiet", "--format", "json"])
    document = json.loads(capsys.readouterr().out)
    assert code == 0
    assert document["ok"] is True and document["scan"]["ok"] is True
    assert document["scan"]["findings"] == [] and document["scan"]["files"] > 0
    assert [(row["check"], row["passed"]) for row in document["invariants"]] == [("INV1", True)]
    assert document["kill_matrix"] is None


@pytest.fixture
def forget_tinymesh() -> Iterator[None]:
    """Other tests load their own (fixed or violating) tinymesh: drop this one afterwards."""
    yield
    for name in [name for name in sys.modules if name.split(".")[0] == "tinymesh"]:
        del sys.modules[name]


@pytest.mark.usefixtures("forget_tinymesh")
def test_a_violating_mesh_fails_the_job(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    sample_repo.write(tmp_path, fixed=False)
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    import tinymesh.adapter

    import reference_impl.adapter

    monkeypatch.setattr(reference_impl.adapter, "make_adapter", tinymesh.adapter.make_adapter)
    code = main(["check", "--no-prove", "--invariants", "INV1", "--quiet"])
    out = capsys.readouterr().out
    assert code == 1
    assert main(["check", "--no-prove", "--invariants", "INV1", "--quiet", "--format", "json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["ok"] is False
    assert document["invariants"][0]["passed"] is False
    assert "2. Dynamic invariants on the reference mesh: FAIL (0 of 1 passed)" in out
    assert "DeliveryFailure answers rejected post" in out
    assert out.rstrip().endswith("Result: FAIL")


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--profile", "nightly"], "--profile: unknown profile 'nightly'"),
        (["--no-prove", "--invariants", "INV8"], "--invariants: unknown invariant 'INV8'"),
        (["--invariants", "INV1"], "--invariants needs --no-prove"),
        (["--jobs", "-1"], "--jobs: must be 0 (one per core) or more, got -1"),
    ],
)
def test_a_usage_error_is_one_line_and_exit_2(
    args: list[str], fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and fragment in err[0], err


def _without_seconds(document: object) -> object:
    if isinstance(document, dict):
        return {k: _without_seconds(v) for k, v in document.items() if k != "seconds"}
    if isinstance(document, list):
        return [_without_seconds(v) for v in document]
    return document


@pytest.mark.slow
def test_two_jobs_give_the_report_of_one(capsys: pytest.CaptureFixture[str]) -> None:
    reports = {}
    for jobs in ("1", "2"):
        code = main(["check", "--no-prove", "--invariants", "INV2,INV1", "--quiet",
                     "--format", "json", "--jobs", jobs])
        assert code == 0
        reports[jobs] = json.loads(capsys.readouterr().out)
    assert _without_seconds(reports["2"]) == _without_seconds(reports["1"])
    assert [row["check"] for row in reports["2"]["invariants"]] == ["INV2", "INV1"]


@pytest.mark.usefixtures("forget_tinymesh")
def test_a_violation_found_in_a_worker_fails_the_job(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Negative control of the parallel run: the rows that come back from the workers carry
    the violation and its counterexample."""
    sample_repo.write(tmp_path, fixed=False)
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    import tinymesh.adapter

    import reference_impl.adapter

    monkeypatch.setattr(reference_impl.adapter, "make_adapter", tinymesh.adapter.make_adapter)
    code = main(["check", "--no-prove", "--invariants", "INV1,INV2", "--quiet", "--jobs", "2"])
    out = capsys.readouterr().out
    assert code == 1
    assert "DeliveryFailure answers rejected post" in out
    assert out.rstrip().endswith("Result: FAIL")
