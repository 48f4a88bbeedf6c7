"""`prove --mutate --verify-triage`: the triaged mutants are run too, and an entry is stale
when it matches no mutant or a check kills the mutant it names (exit 1, each named).

The fast tests judge one real mutant of the reference against the real checks (only the
unmutated mesh's measurement is stubbed: the check order does not change a kill); the last
one verifies a seeded sample of the repository's own triage, end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import harness
import invariants.mutants.score.run as score_run
from harness.cli import main
from invariants.mutants.score.evaluate import Baseline, Verdict

WORKTREE = Path(harness.__file__).resolve().parents[1]
# `Hub.block` ignoring every later hold while one is on: INV3's seed program
# `hold-inside-a-hold` kills it in one example.
KILLED = '''\
[[{table}]]
path = "hub.py"
function = "Hub.block"
operator = "core/ReplaceComparisonOperator_LtE_Gt"
snippet = "if self.blocked and until <= self._blocked_until:"
occurrence = 0
reason = "a lie: a longer hold inside a shorter one is cut short"
'''
HUB = "reference_impl/hub.py"


@pytest.fixture
def unmeasured(monkeypatch: pytest.MonkeyPatch) -> None:
    """The unmutated mesh is not measured (the reference is scan-clean; checks in order)."""
    monkeypatch.setattr(score_run, "measure",
                        lambda target, profile, **_: Baseline(frozenset(), target.checks))
    monkeypatch.chdir(WORKTREE)


def _triage(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "harness-mutants.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _prove(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, Any, str]:
    # One job: the mutants are judged in this process, where the tests' patches record.
    code = main(["prove", "--mutate", *argv, "--no-cache", "--format", "json", "--jobs", "1"])
    out, err = capsys.readouterr()
    return code, json.loads(out), err


def test_a_lying_entry_fails_verify_triage_naming_it(
    unmeasured: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    triage = _triage(tmp_path, KILLED.format(table="equivalent"))
    code, data, err = _prove([HUB, "--triage", str(triage), "--verify-triage",
                              "--only-triaged"], capsys)
    assert code == 1
    (stale,) = data["stale_triage"]
    assert (stale["table"], stale["entry"], stale["check"]) == ("equivalent", 1, "INV3")
    assert stale["mutant"] == data["equivalent"][0]["id"] and "not equivalent" in stale["why"]
    (line,) = [x for x in err.splitlines() if "--verify-triage" in x]
    assert f"{triage}: [[equivalent]] #1 hub.py Hub.block" in line
    assert f"names {stale['mutant']}" in line and "INV3 (seed) kills" in line
    # The score still takes the entry's word (it leaves the denominator); the exit says no.
    assert data["total"] == 1 and data["score"] is None


def test_without_verify_triage_the_lie_is_not_run(
    unmeasured: None, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ran: list[str] = []

    def judged(_target: object, _baseline: object, mutant: Any, **_kw: object) -> Verdict:
        ran.append(mutant.id)
        return Verdict("killed", "INV1", "seed", 1)

    monkeypatch.setattr(score_run, "evaluate", judged)
    triage = _triage(tmp_path, KILLED.format(table="equivalent"))
    code, data, _err = _prove([HUB, "--triage", str(triage)], capsys)
    assert code == 0 and data["stale_triage"] == []
    (equivalent,) = data["equivalent"]
    assert equivalent["function"] == "Hub.block" and "verdict" not in equivalent
    assert ran and equivalent["id"] not in ran and data["total"] == len(ran) + 1


def test_a_known_blind_mutant_is_run_and_counted_a_survivor(
    unmeasured: None, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(score_run, "evaluate", lambda *_a, **_k: Verdict("survived"))
    triage = _triage(tmp_path, KILLED.format(table="blind"))
    code = main(["prove", "--mutate", HUB, "--triage", str(triage), "--verify-triage",
                 "--only-triaged", "--no-cache"])
    text = capsys.readouterr().out
    assert code == 0
    assert "0.000 = 0 killed / (1 total - 0 equivalent - 0 incompetent)" in text
    assert "survived: 0" in text and "survivors, known blind: 1" in text
    assert "known blind: a lie: a longer hold" in text


def test_a_known_blind_mutant_a_check_kills_is_a_stale_entry(
    unmeasured: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    triage = _triage(tmp_path, KILLED.format(table="blind"))
    code, data, _err = _prove([HUB, "--triage", str(triage), "--verify-triage",
                               "--only-triaged"], capsys)
    assert code == 1 and data["killed"] == 1 and data["blind"] == []
    (stale,) = data["stale_triage"]
    assert stale["table"] == "blind" and "no longer blind" in stale["why"]


def test_an_entry_without_occurrence_stops_the_run_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(WORKTREE)
    triage = _triage(tmp_path, KILLED.format(table="equivalent").replace("occurrence = 0\n", ""))
    assert main(["prove", "--mutate", HUB, "--triage", str(triage)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert f"{triage}: [[equivalent]] #1: occurrence: missing" in err
    assert "add `occurrence = N`" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--only-triaged"], "--only-triaged: only with --verify-triage"),
        (["--verify-triage", "--from-session", "s.sqlite"], "--verify-triage runs the triaged"),
        (["--verify-triage", "--in-place"], "--verify-triage runs the triaged"),
    ],
)
def test_verify_triage_usage_errors_exit_2_with_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["prove", "--mutate", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


@pytest.mark.slow
def test_a_seeded_sample_of_the_repositorys_triage_is_true(tmp_path: Path) -> None:
    """Three triaged mutants of harness-mutants.toml, drawn with seed 1, each run through
    every check: none is killed, so no entry is stale (an equivalent one survives; a known
    blind one is a survivor the score counts)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(WORKTREE),
                                                        os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run(
        [sys.executable, "-m", "harness", "prove", "--mutate", "--verify-triage",
         "--only-triaged", "--sample", "3", "--seed", "1", "--jobs", "2", "--no-cache",
         "--triage", str(WORKTREE / "harness-mutants.toml"), "--format", "json"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600, check=False,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["verified_triage"] and data["total"] == 3 and data["stale_triage"] == []
    assert len(data["equivalent"]) + len(data["blind"]) == 3
    assert {e["verdict"] for e in data["equivalent"]} <= {"survived"}
    assert data["killed"] == 0 and data["survived"] == [] and data["incompetent"] == []
