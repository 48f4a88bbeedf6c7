"""The example is judged as itself: by `python -m harness check` run in it, and with the
invariants about capabilities its adapter does not declare reported not applicable.

- INV4 (grain calls) is not applicable on TinyMesh, whose adapter declares no grain
  router: under pytest the item is skipped with the reason. The control: the same adapter
  declaring a grain router is held to INV4 (and, making no grain calls, fails it as not
  exercised).
- `python -m harness check` in the example judges the example (its [tool.harness]): every
  configured obligation exercised, INV4 a "not applicable" row, the kill matrix (the
  reference's mutants) skipped with the reason, exit 0. The control: a planted bug in the
  example's source fails the check.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import tinymesh_repo
from planted_bugs import BUGS

from invariants.checks import CHECKS

INV4 = "harness::INV4[tinymesh.harness_adapter:make]"
_DECLARED = "                              Capability.BREAKER_THRESHOLD})\n"
_EVIDENCE = re.compile(r"^ {9,}(\d+)  \S")


def test_inv4_is_not_applicable_on_the_example(tmp_path: Path) -> None:
    repo = tinymesh_repo.copy_to(tmp_path)
    result = tinymesh_repo.pytest_harness(repo, "-m", "harness", "-k", "INV4", "-v", "-rs")
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{INV4} SKIPPED" in result.stdout
    assert "INV4 not applicable: the adapter declares no grain router" in result.stdout


@pytest.mark.slow
def test_the_control_declaring_a_grain_router_is_held_to_inv4(tmp_path: Path) -> None:
    repo = tinymesh_repo.copy_to(tmp_path)
    tinymesh_repo.patch(repo, "src/tinymesh/harness_adapter.py", [(
        _DECLARED, _DECLARED.replace("})", ", Capability.GRAIN_ROUTER})"))])
    result = tinymesh_repo.pytest_harness(repo, "-m", "harness", "-k", "INV4", "-v")
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"{INV4} FAILED" in result.stdout
    assert "INV4 (a timed-out delivery is never re-sent) not exercised" in result.stdout


@pytest.mark.slow
def test_check_in_the_example_judges_the_example(tmp_path: Path) -> None:
    repo = tinymesh_repo.copy_to(tmp_path)
    result = tinymesh_repo.run(repo, "harness", "check", "--quiet")
    out = tinymesh_repo.normalise(result.stdout, repo)
    assert result.returncode == 0, out + result.stderr
    lines = out.splitlines()
    assert lines[0] == ("mesh-harness check: the repository at /home/me/tinymesh-repo "
                        "(its [tool.harness])")
    assert lines[1] == "adapter tinymesh.harness_adapter:make; profile ci"
    assert "2. Dynamic invariants on tinymesh.harness_adapter:make: pass (6 of 6 passed, " \
        "1 not applicable)" in lines
    assert "   adapter conformance: pass (6 program(s), 0 broken convention(s); see " \
        "docs/adapter.md)" in lines
    assert any(re.match(r"   INV4 .* not applicable +0 examples", line) for line in lines)
    assert "3. Kill matrix: skipped" in lines
    assert lines[-1] == "Result: PASS"
    # Every obligation of every applicable invariant was exercised, each count shown; the
    # three that need what TinyMesh does not declare (the envelope round trip, and handlers
    # that raise for two) say so.
    dynamic = out.split("2. Dynamic invariants", 1)[1].split("3. Kill matrix", 1)[0]
    counts = [int(m[1]) for line in dynamic.splitlines() if (m := _EVIDENCE.match(line))]
    assert len(counts) == sum(len(CHECKS[c].obligations) for c in CHECKS if c != "INV4")
    assert counts.count(0) == 3, dynamic
    assert "not applicable: the adapter declares no envelope roundtrip" in dynamic
    assert "not applicable: the adapter declares no raising handlers" in dynamic


def test_the_control_a_planted_bug_fails_the_check(tmp_path: Path) -> None:
    repo = tinymesh_repo.copy_to(tmp_path)
    bug = next(b for b in BUGS if b.name == "answer-a-refusal")
    tinymesh_repo.patch(repo, bug.path, bug.edits)
    result = tinymesh_repo.run(repo, "harness", "check", "--quiet", "--invariants", "INV1")
    assert result.returncode == 1, result.stdout + result.stderr
    assert any(re.match(r"   INV1 rejection is terminal +FAIL ", line)
               for line in result.stdout.splitlines()), result.stdout
    assert "INV1: DeliveryFailure answers rejected post " in result.stdout
    assert result.stdout.splitlines()[-1] == "Result: FAIL"
