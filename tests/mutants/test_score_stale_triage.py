"""A stale triage entry is judged only against the files a run enumerated: `prove --mutate`
on one module of the reference does not call every entry of the other modules stale (it
used to print 311 such lines), and a stale entry of the module mutated is still reported.
The mutants themselves are not run here (the verdicts are stubbed): only the report's
triage lines are under test."""

from __future__ import annotations

from pathlib import Path

import pytest

import harness
import invariants.mutants.score.run as score_run
from harness.cli import main
from invariants.mutants.score.engine import enumerate_file
from invariants.mutants.score.evaluate import Baseline, Verdict
from invariants.mutants.score.triage import parse

WORKTREE = Path(harness.__file__).resolve().parents[1]
TRIAGE = WORKTREE / "harness-mutants.toml"
OPERATOR = "core/ReplaceComparisonOperator_Lt_LtE"
SOURCE = "def over(count, limit):\n    return count < limit\n"


def _entry(path: str, function: str) -> str:
    return (f'[[equivalent]]\npath = "{path}"\nfunction = "{function}"\n'
            f'operator = "{OPERATOR}"\nsnippet = "return count < limit"\noccurrence = 0\n'
            'reason = "r"\n')


def test_only_the_entries_of_the_files_enumerated_are_judged() -> None:
    triage = parse(Path("t.toml"), _entry("limits.py", "under") + _entry("other.py", "gone"))
    mutants = enumerate_file("limits.py", SOURCE, [OPERATOR])
    assert [e.path for e in triage.stale(mutants, ["limits.py"])] == ["limits.py"]
    # The control: without the files, every entry is judged, the other file's too.
    assert [e.path for e in triage.stale(mutants)] == ["limits.py", "other.py"]


@pytest.fixture
def stubbed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every mutant survives at once; the unmutated mesh is not measured."""
    monkeypatch.setattr(score_run, "measure",
                        lambda target, profile, **_: Baseline(frozenset(), target.checks))
    monkeypatch.setattr(score_run, "evaluate", lambda *_a, **_k: Verdict("survived"))
    monkeypatch.chdir(WORKTREE)


def _stale_lines(argv: list[str], capsys: pytest.CaptureFixture[str]) -> list[str]:
    assert main(["prove", "--mutate", *argv, "--sample", "2", "--no-cache"]) == 0
    out = capsys.readouterr().out
    return [line for line in out.splitlines() if line.startswith("stale triage entry")]


def test_mutating_one_module_reports_no_entry_of_the_others_stale(
    stubbed: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _stale_lines(["reference_impl/breaker.py"], capsys) == []


def test_control_a_stale_entry_of_the_module_mutated_is_reported(
    stubbed: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    triage = tmp_path / "harness-mutants.toml"
    triage.write_text(TRIAGE.read_text(encoding="utf-8") + _entry("breaker.py", "Gone.f"))
    lines = _stale_lines(["reference_impl/breaker.py", "--triage", str(triage)], capsys)
    assert len(lines) == 1 and "breaker.py Gone.f" in lines[0], lines
