"""The evidence in the reports: `python -m harness check` (text and JSON) and the pytest
item show, per obligation, the cases the run exercised; a mesh that never showed a case of
some obligation fails as "not exercised" with its cause, never passes.

The negative control is the reference mesh with its REJECTED events left out of its trace
(it drops anonymous posts silently): INV1 then has no rejection to hold to its rule.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from harness.cli import main
from invariants.adapter import Chooser
from invariants.checks import CHECKS
from invariants.trace import EventKind, TraceEvent
from reference_impl.adapter import ReferenceAdapter

REJECTED = "anonymous posts rejected once and dropped"


class _SilentRejections(ReferenceAdapter):
    """Rejects as the reference does, but its trace never says so."""

    def trace(self) -> Sequence[TraceEvent]:
        return [e for e in super().trace() if e.kind is not EventKind.REJECTED]


def _silent(chooser: Chooser) -> _SilentRejections:
    return _SilentRejections(chooser)


@pytest.mark.slow
def test_the_check_report_shows_every_obligation_with_its_count(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["check", "--no-prove", "--invariants", "INV1", "--quiet"]) == 0
    out = capsys.readouterr().out
    for name in CHECKS["INV1"].obligations:
        [line] = [line for line in out.splitlines() if line.endswith(f"  {name}")]
        assert int(line.split()[0]) > 0, line
    assert main(["check", "--no-prove", "--invariants", "INV1", "--quiet",
                 "--format", "json"]) == 0
    [row] = json.loads(capsys.readouterr().out)["invariants"]
    assert row["verdict"] == "pass"
    assert [o["obligation"] for o in row["obligations"]] == list(CHECKS["INV1"].obligations)
    assert all(o["exercised"] > 0 and "cause" not in o for o in row["obligations"])


@pytest.mark.slow
def test_a_mesh_that_never_shows_a_rejection_is_not_exercised(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import reference_impl.adapter

    monkeypatch.setattr(reference_impl.adapter, "make_adapter", _silent)
    assert main(["check", "--no-prove", "--invariants", "INV1", "--quiet"]) == 1
    out = capsys.readouterr().out
    assert "   INV1 rejection is terminal  NOT EXERCISED" in out
    assert [line.split() for line in out.splitlines() if line.endswith(f"  {REJECTED}")] \
        == [["0", *REJECTED.split()]]
    assert "not exercised: no post the harness made without an identity was rejected" in out
    assert out.rstrip().endswith("Result: FAIL")
    assert main(["check", "--no-prove", "--invariants", "INV1", "--quiet",
                 "--format", "json"]) == 1
    [row] = json.loads(capsys.readouterr().out)["invariants"]
    assert row["passed"] is False and row["verdict"] == "not exercised"
    [unexercised] = [o for o in row["obligations"] if o["exercised"] == 0]
    assert unexercised["obligation"] == REJECTED
    assert "does the mesh emit REJECTED?" in unexercised["cause"]


ADAPTER = '''
from collections.abc import Sequence

from invariants.trace import EventKind, TraceEvent
from reference_impl.adapter import ReferenceAdapter


class Silent(ReferenceAdapter):
    def trace(self) -> Sequence[TraceEvent]:
        return [e for e in super().trace() if e.kind is not EventKind.REJECTED]


def make_adapter(chooser):
    return Silent(chooser)
'''


def _run(pytester: pytest.Pytester, adapter: str) -> pytest.RunResult:
    pytester.makepyprojecttoml('[tool.harness]\npaths = ["src"]\ninvariants = ["INV1"]\n')
    pytester.makepyfile(**{"src/mesh": "VALUE = 1\n", "silentmesh": ADAPTER})
    pytester.syspathinsert()
    return pytester.runpytest("-p", "harness", "-m", "harness_invariant", "-p",
                              "no:cacheprovider", f"--harness-adapter={adapter}", "-rA")


def test_the_pytest_item_fails_as_not_exercised_with_the_cause(
    pytester: pytest.Pytester,
) -> None:
    result = _run(pytester, "silentmesh:make_adapter")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "INV1 (rejection is terminal) not exercised by silentmesh:make_adapter" in out
    assert f"0  {REJECTED}" in out
    assert "not exercised: no post the harness made without an identity was rejected" in out


def test_the_pytest_item_of_the_reference_shows_its_evidence(
    pytester: pytest.Pytester,
) -> None:
    result = _run(pytester, "reference_impl.adapter:make_adapter")
    result.assert_outcomes(passed=1)
    out = result.stdout.str()
    assert "INV1 evidence (" in out
    assert REJECTED in out
