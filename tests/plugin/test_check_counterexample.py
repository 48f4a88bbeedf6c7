"""A failing invariant's report on a mesh built on the asyncio kit (the aiomesh example's
planted bug `nack-rejected`, in a copy of examples/aiomesh-repo): `check`'s text shows the
step program, the Mermaid diagram and the virtual loop's schedule, whether a seed program
or the state machine's search failed, and its JSON carries them as fields with every
obligation and its count; `pytest -p harness` shows the same. The control: the clean mesh
passes with no counterexample anywhere in its report.

Each check run is the job's own steps in this process (the settings of the copy, its
subject, `run_check`), rendered both ways from one run; the pytest run is a subprocess.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.jobs.check.report import render, to_json
from harness.jobs.check.run import run_check
from harness.jobs.check.subject import subject_for
from harness.settings import for_command, importing_from
from invariants.checks import CHECKS

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))

from aiomesh_planted_bugs import BY_NAME
from test_aiomesh_planted_bugs import _copy, _run

BUG = BY_NAME["nack-rejected"]
SCHEDULE = "Schedule of the failing run (virtual loop): "


@pytest.fixture
def isolated(monkeypatch: pytest.MonkeyPatch, team_registry: None) -> Iterator[None]:
    """The copy's `src` goes on sys.path for one test; an aiomesh it imported is dropped
    afterwards (one imported before it, by another test, stays), and the team invariant
    its pyproject registers (TURN1) is forgotten (`team_registry`)."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    before = set(sys.modules)
    yield
    for name in [name for name in sys.modules
                 if name.split(".")[0] == "aiomesh" and name not in before]:
        del sys.modules[name]


def _check(repo: Path, monkeypatch: pytest.MonkeyPatch, check_id: str, *,
           search_only: bool = False) -> tuple[str, dict[str, Any]]:
    """One run of `check --no-prove --invariants CHECK_ID --jobs 1` in `repo`: its text
    and its JSON."""
    monkeypatch.chdir(repo)
    settings = for_command()
    importing_from(settings)
    subject = subject_for(settings)
    if search_only:
        subject = dataclasses.replace(subject, seed_scenarios=False)
    result = run_check(kill_matrix=False, invariants=[check_id], subject=subject, jobs=1)
    return render(result), json.loads(to_json(result))


def _row_text(text: str) -> str:
    """The invariant section of the text report (the scan's and the matrix's left out)."""
    return text.split("2. Dynamic invariants", 1)[1].split("3. Kill matrix", 1)[0]


def _assert_obligations(row: dict[str, Any]) -> None:
    names = [item["obligation"] for item in row["obligations"]]
    assert names == list(CHECKS[row["check"]].obligations), row["obligations"]
    assert all(isinstance(item["exercised"], int) for item in row["obligations"])


@pytest.mark.usefixtures("isolated")
def test_a_seed_program_failure_shows_program_diagram_and_schedule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text, document = _check(_copy(tmp_path, BUG.factory), monkeypatch, "INV1")
    shown = _row_text(text)
    assert "        Seed program 'rejection':\n        state = INV1Machine()\n" in shown
    assert "        ```mermaid\n        sequenceDiagram\n" in shown
    assert f"        {SCHEDULE}FIFO" in shown
    row = document["invariants"][0]
    assert row["verdict"] == "violation" and not document["ok"]
    example = row["counterexample"]
    assert example["seed_program"] == "rejection" and example["examples"] >= 1
    assert example["program"].startswith("state = INV1Machine()\n")
    assert example["program"] in text.replace("\n        ", "\n")
    assert example["steps"] == example["program"].count("state.safety()")
    assert example["schedule"] == "FIFO"
    assert example["diagram"].startswith("sequenceDiagram\n")
    assert example["reproduce"] is None  # a seed program needs no blob
    _assert_obligations(row)


@pytest.mark.usefixtures("isolated")
@pytest.mark.slow
def test_a_search_failure_shows_the_shrunk_program_diagram_schedule_and_blob(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text, document = _check(_copy(tmp_path, BUG.factory), monkeypatch, "INV1",
                            search_only=True)
    shown = _row_text(text)
    assert "        Falsifying example:\n        state = INV1Machine()\n" in shown
    assert "        ```mermaid\n        sequenceDiagram\n" in shown
    assert f"        {SCHEDULE}" in shown
    assert "@reproduce_failure(" in shown
    row = document["invariants"][0]
    example = row["counterexample"]
    assert example["seed_program"] is None
    assert example["reproduce"].startswith("@reproduce_failure(")
    assert example["schedule"] and f"{SCHEDULE}{example['schedule']}" in text.replace(
        "\n        ", "\n")
    assert example["program"].endswith("state.teardown()")
    _assert_obligations(row)
    # The search's examples ran before the failure: their cases are counted.
    assert sum(item["exercised"] for item in row["obligations"]) > 0


@pytest.mark.usefixtures("isolated")
def test_the_clean_mesh_passes_with_no_counterexample(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text, document = _check(_copy(tmp_path), monkeypatch, "INV7")
    row = document["invariants"][0]
    assert row["verdict"] == "pass", text
    assert row["counterexample"] is None
    _assert_obligations(row)
    assert all(item["exercised"] > 0 or "not_applicable" in item
               for item in row["obligations"])
    assert "state = " not in text and "```mermaid" not in text and SCHEDULE not in text


@pytest.mark.slow
def test_pytest_harness_shows_the_same_failure(tmp_path: Path) -> None:
    done = _run(_copy(tmp_path), "pytest", "-p", "harness", "-p", "no:cacheprovider",
                "-m", "harness", "-k", BUG.expected, "-rA", "--harness-adapter", BUG.factory)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr
    out = done.stdout
    assert "Seed program 'rejection':\nstate = INV1Machine()\n" in out
    assert "```mermaid\nsequenceDiagram\n" in out and f"{SCHEDULE}FIFO" in out
    # The evidence section lists every obligation, failing run or not.
    for name in CHECKS["INV1"].obligations:
        assert f"  {name}" in out.split("INV1 evidence", 1)[1], name
