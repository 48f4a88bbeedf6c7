"""A team's own invariants in `python -m harness check` and `pytest -p harness`: listed
with the built-in ones, their obligations with their evidence, judged on every run; one the
mesh breaks fails with its shrunk counterexample; one whose checker raises is an error of
that checker (its traceback kept), never a verdict."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness.cli import main

INVARIANTS = '''\
from invariants.checks.api import EventKind, always, at_most, by, happened, invariant, never

# Holds on the reference: a hub handles a delivery at most once, and its queue never
# reports a negative depth.
QUEUES = invariant(
    "QUEUE1", "a hub's queue hands each delivery over once",
    at_most("a delivery is handled once at a hub", 1, happened(EventKind.HANDLED),
            key=by("hub", "delivery_id")),
    always("queue depths are whole", lambda e: e.depth is None or e.depth >= 0),
)

# False of the reference, which answers a post to a missing hub with a failure.
SILENT = invariant(
    "SILENT1", "no delivery is answered with a failure",
    never("no failure answered", happened(EventKind.FAILURE_EMITTED)),
)


def _explodes(event):
    if event.kind is EventKind.HANDLED:
        raise LookupError("the team's predicate broke")
    return False


BROKEN = invariant("BROKEN1", "a predicate that raises", never("nothing bad", _explodes))
'''


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, team_registry: None) -> Path:
    package = tmp_path / "team_checks"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "queues.py").write_text(INVARIANTS, encoding="utf-8")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "mesh.py").write_text("VALUE = 1\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _configure(repo: Path, *entries: str) -> None:
    listed = ", ".join(f'"{entry}"' for entry in entries)
    (repo / "pyproject.toml").write_text(
        '[tool.harness]\npaths = ["src"]\nadapter = "reference_impl.adapter:make_adapter"\n'
        f"invariants = [{listed}]\n", encoding="utf-8")


@pytest.mark.slow
def test_a_team_invariant_that_holds_is_listed_with_its_evidence(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _configure(repo, "INV1", "team_checks.queues:QUEUES")
    code = main(["check", "--quiet", "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0, report
    rows = {row["check"]: row for row in report["invariants"]}
    assert list(rows) == ["INV1", "QUEUE1"]
    assert rows["QUEUE1"]["verdict"] == "pass"
    evidence = {o["obligation"]: o["exercised"] for o in rows["QUEUE1"]["obligations"]}
    assert set(evidence) == {"a delivery is handled once at a hub", "queue depths are whole"}
    assert all(cases > 0 for cases in evidence.values()), evidence


def test_one_the_mesh_breaks_fails_with_its_counterexample(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _configure(repo, "none", "team_checks.queues:SILENT")
    code = main(["check", "--quiet"])
    out = capsys.readouterr().out
    assert code == 1, out
    assert re.search(r"SILENT1 no delivery is answered with a failure +FAIL", out), out
    assert re.search(r"SILENT1: no failure answered: seq \d+ at \d+ ms \(failure_emitted d\d+ "
                     r"at \w+\) breaks it", out), out
    assert "state = SILENT1Machine()" in out  # the shrunk step program
    assert "title SILENT1 counterexample" in out  # the diagram, with the answer it forbids
    assert re.search(r"VIOLATION t=\d+ seq \d+ DeliveryFailure \w+ answers d\d+", out), out


@pytest.mark.slow
def test_a_checker_that_raises_is_its_error_with_its_traceback(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _configure(repo, "none", "team_checks.queues:BROKEN")
    code = main(["check", "--quiet", "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1, report
    [row] = report["invariants"]
    assert (row["check"], row["verdict"]) == ("BROKEN1", "error")  # never "violation"
    code = main(["check", "--quiet"])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "LookupError: the team's predicate broke" in out
    assert "raised by the checker of BROKEN1 (team_checks.queues.BROKEN1)" in out
    assert 'team_checks/queues.py", line' in out and "in _explodes" in out  # its own frame


@pytest.mark.slow
@pytest.mark.usefixtures("team_registry")
def test_pytest_p_harness_gives_each_team_invariant_its_item(pytester: pytest.Pytester) -> None:
    package = pytester.path / "team_checks_items"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "queues.py").write_text(INVARIANTS, encoding="utf-8")
    pytester.makepyfile(**{"src/mesh": "VALUE = 1\n"})
    pytester.makepyprojecttoml(
        '[tool.harness]\npaths = ["src"]\nadapter = "reference_impl.adapter:make_adapter"\n'
        'invariants = ["none", "team_checks_items.queues:QUEUES", '
        '"team_checks_items.queues:SILENT"]\n')
    result = pytester.runpytest_inprocess("-p", "harness", "-q", "-k", "QUEUE1 or SILENT1")
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert re.search(r"FAILED .*SILENT1", out), out
    assert "SILENT1: no failure answered: seq " in out
