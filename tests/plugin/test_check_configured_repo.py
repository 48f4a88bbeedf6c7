"""`python -m harness check` in a repository with `[tool.harness]` judges that repository:
its adapter, invariants and params; an invariant about a capability the adapter does not
declare is not applicable (listed, exit 0 when all else passed); a mesh that raises shows
its traceback; the kill matrix, which belongs to the reference, is skipped with the reason."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.cli import main
from invariants.adapter import Capability
from invariants.conformance.programs import PROGRAMS

ADAPTERS = '''\
from reference_impl.adapter import ReferenceAdapter


class NoGrain(ReferenceAdapter):
    """The reference mesh, declared without its grain router."""

    capabilities = ("subscribe", "stop_lifecycle")


class Exploding(ReferenceAdapter):
    def stop(self, *, graceful=True):
        raise KeyError("h0")


def no_grain(chooser):
    return NoGrain(chooser)


def exploding(chooser):
    return Exploding(chooser)
'''


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "othermesh.py").write_text(ADAPTERS, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    sys.modules.pop("othermesh", None)


def _configure(repo: Path, adapter: str, invariants: str) -> Path:
    pyproject = repo / "pyproject.toml"
    pyproject.write_text(
        f'[tool.harness]\npaths = ["src"]\nadapter = "{adapter}"\ninvariants = {invariants}\n',
        encoding="utf-8",
    )
    return pyproject


def test_the_scan_line_counts_the_findings_its_baseline_accepts(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "src" / "registry.py").write_text("_instances = {}\n", encoding="utf-8")
    pyproject = _configure(repo, "othermesh:no_grain", '["INV1"]')
    assert main(["check", "--quiet", "--no-prove", "--invariants", "none"]) == 1
    unaccepted = capsys.readouterr().out
    assert "1. Static scan: FAIL" in unaccepted, unaccepted
    assert "1 finding(s), 0 error(s), 0 suppressed, 0 baselined" in unaccepted, unaccepted
    assert main(["scan", "--baseline", "harness-baseline.json", "--update-baseline"]) == 0
    pyproject.write_text(pyproject.read_text() + 'baseline = "harness-baseline.json"\n')
    capsys.readouterr()
    assert main(["check", "--quiet", "--no-prove", "--invariants", "none"]) == 0
    out = capsys.readouterr().out
    assert "1. Static scan: pass" in out, out
    assert "0 finding(s), 0 error(s), 0 suppressed, 1 baselined" in out, out


@pytest.mark.slow
def test_it_judges_the_configured_mesh_and_lists_what_does_not_apply(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _configure(repo, "othermesh:no_grain", '["INV1", "INV4"]')
    code = main(["check", "--quiet"])
    out = capsys.readouterr().out
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0] == f"mesh-harness check: the repository at {repo} (its [tool.harness])"
    assert lines[1] == "adapter othermesh:no_grain; profile ci"
    assert ("2. Dynamic invariants on othermesh:no_grain: pass "
            "(1 of 1 passed, 1 not applicable)") in out
    assert "INV4 not applicable: the adapter declares no grain router (10 obligation(s) not" in out
    assert "3. Kill matrix: skipped\n   the pre-fix mutants are mutants of the bundled" in out
    assert out.rstrip().endswith("Result: PASS")
    # The report fits 100 columns, but for the paths it names.
    unpathed = [line for line in lines if str(repo) not in line]
    assert max(len(line) for line in unpathed) <= 100, max(unpathed, key=len)

    assert main(["check", "--quiet", "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    verdicts = {row["check"]: row["verdict"] for row in document["invariants"]}
    assert verdicts == {"INV1": "pass", "INV4": "not applicable"}
    assert document["kill_matrix"] is None and document["kill_matrix_skipped"]
    # NoGrain's, and what the reference's protocol shows (its round trip, its breaker keyword)
    declared = {Capability.SUBSCRIBE, Capability.STOP_LIFECYCLE,
                Capability.ENVELOPE_ROUNDTRIP, Capability.BREAKER_THRESHOLD}
    programs = sum(1 for p in PROGRAMS if p.needs is None or p.needs in declared)
    assert document["adapter_conformance"] == {"ok": True, "programs": programs, "broken": []}


def test_the_control_the_same_mesh_declaring_everything_is_held_to_inv4(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _configure(repo, "reference_impl.adapter:make_adapter", '["INV4"]')
    assert main(["check", "--quiet", "--no-prove"]) == 0
    out = capsys.readouterr().out
    assert "   INV4 a timed-out delivery is never re-sent  pass" in out
    # Only the at-least-once obligation, a contract the reference does not keep, is left.
    assert [line.strip() for line in out.splitlines() if "not applicable" in line] == [
        "not applicable: the adapter declares no at least once"]


def test_params_reach_the_checkers(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _configure(repo, "reference_impl.adapter:make_adapter", '["INV4"]')
    assert main(["check", "--quiet", "--no-prove", "--param", "delivery_retries=2"]) == 1
    assert "INV4: delivery d1 attempted more than 3 times" in capsys.readouterr().out


def test_a_mesh_that_raises_shows_its_traceback(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _configure(repo, "othermesh:exploding", '["INV5"]')
    assert main(["check", "--quiet"]) == 1
    out = capsys.readouterr().out
    assert "adapter conformance: FAIL" in out
    assert "othermesh:exploding: the adapter raised KeyError: 'h0'" in out
    assert "Traceback (most recent call last):" in out
    assert 'othermesh.py", line' in out and "in stop" in out


@pytest.mark.parametrize(("options", "found_by"), [
    ([], "Seed program 'rejection'"),
    pytest.param(["--search-only"], "state = INV1Machine()", marks=pytest.mark.slow),
])
def test_search_only_leaves_the_seed_scenarios_out(
    repo: Path, capsys: pytest.CaptureFixture[str], options: list[str], found_by: str
) -> None:
    # Mutant M9 answers rejections: a seed program finds it first; search alone finds it too.
    _configure(repo, "invariants.fuzzing.mutant_adapters:M9", '["INV1"]')
    assert main(["check", "--quiet", "--format", "json", *options]) == 1
    document = json.loads(capsys.readouterr().out)
    (row,) = document["invariants"]
    assert row["verdict"] == "violation"
    assert main(["check", "--quiet", *options]) == 1
    assert found_by in capsys.readouterr().out


def test_adapter_judges_another_factory_in_place_of_the_configured_one(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--adapter` (as adapter-check and fuzz take it): the repository's settings with
    another factory, a planted bug's, say. The control: the configured one."""
    _configure(repo, "othermesh:no_grain", '["INV4"]')
    assert main(["check", "--quiet", "--adapter", "reference_impl.adapter:make_adapter"]) == 0
    out = capsys.readouterr().out
    assert "adapter reference_impl.adapter:make_adapter; profile ci" in out
    assert "   INV4 a timed-out delivery is never re-sent  pass" in out
    assert main(["check", "--quiet"]) == 0
    assert "INV4 not applicable: the adapter declares no grain router" in capsys.readouterr().out
    assert main(["check", "--quiet", "--adapter", "othermesh:nowhere"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line == ("mesh-harness check: error: --adapter: module 'othermesh' has no "
                    "attribute 'nowhere'")
