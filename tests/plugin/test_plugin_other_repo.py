"""`pytest -p harness` in another repo: its own [tool.harness], its own mesh and adapter.

The repo (tests/plugin/sample_repo.py) has a tiny mesh that answers rejected posts with a
DeliveryFailure: the run must fail with the file's scan item (MESH001 at that emit site,
its source line) and the INV1 item (the violation, the shrunk program, the reproduce blob,
the diagram). With the fix the same run is green. The suppressed finding never shows.
"""

from __future__ import annotations

import pytest
import sample_repo

MESH_ITEM = "src/tinymesh/mesh.py::harness-scan"
INV1_ITEM = "harness::INV1[tinymesh.adapter:make_adapter]"
INV1_PATTERN = INV1_ITEM.replace("[", "?").replace("]", "?")  # fnmatch reads [] as a class
UNGUARDED = 'self.send(DeliveryFailure(delivery.id, "Rejected"), delivery.target)'


def _line_of(text: str, needle: str) -> tuple[int, int]:
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return number, line.index("DeliveryFailure") + 1
    raise AssertionError(f"{needle!r} not in the sample")


def test_the_violating_repo_fails_with_the_right_items_and_messages(
    pytester: pytest.Pytester,
) -> None:
    sample_repo.write(pytester.path, fixed=False)
    result = pytester.runpytest("-p", "harness", "-rf")
    result.assert_outcomes(passed=5, failed=2)
    output = result.stdout.str()
    line, column = _line_of(sample_repo.files(fixed=False)["src/tinymesh/mesh.py"], UNGUARDED)
    # The scan item: the finding as `path:line:col MESHxxx message`, then the source line.
    result.stdout.fnmatch_lines([
        f"FAILED {MESH_ITEM} - src/tinymesh/mesh.py:{line}:{column} *",
        f"FAILED {INV1_PATTERN} - INV1 (rejection is term*",
    ])
    assert f"src/tinymesh/mesh.py:{line}:{column} MESH001" in output
    assert f"    {UNGUARDED}" in output
    # The guarded emit site and the suppressed module-level set are not reported.
    assert 'DeliveryFailure(delivery.id, "NotFound")' not in output
    assert "MESH005" not in output
    assert "unused-suppression" not in output
    # The INV1 item: the violation, the step program that shows it (the seed scenario of
    # INV1, tried first), the Mermaid diagram.
    assert "DeliveryFailure answers rejected post" in output
    assert "Seed program 'rejection':" in output
    assert "state.anonymous(" in output
    assert "sequenceDiagram" in output
    # The terminal summary: findings per rule, invariants per adapter.
    result.stdout.fnmatch_lines([
        "*= mesh-harness =*",
        "scan: 3 file(s), 1 finding(s) in 1 file(s)*",
        "  MESH001 unguarded-failure-emit: 1",
        "invariants on tinymesh.adapter:make_adapter: 0 passed, 1 failed: INV1 (violation)",
    ])
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_the_fixed_repo_is_green(pytester: pytest.Pytester) -> None:
    sample_repo.write(pytester.path, fixed=True)
    result = pytester.runpytest("-p", "harness", "-v")
    result.assert_outcomes(passed=7)
    result.stdout.fnmatch_lines([
        "tests/test_tinymesh.py::test_a_post_to_a_hub_is_handled PASSED*",
        f"{MESH_ITEM} PASSED*",
        "harness::scan PASSED*",
        f"{INV1_PATTERN} PASSED*",
        "scan: 3 file(s), 0 finding(s); 1 suppressed, *",
        "invariants on tinymesh.adapter:make_adapter: 1 passed, 0 failed",
    ])
    assert result.ret == pytest.ExitCode.OK


def test_an_unchanged_file_is_served_from_the_cache(pytester: pytest.Pytester) -> None:
    pytester.makepyprojecttoml('[tool.harness]\npaths = ["src"]\ninvariants = []\n')
    for name in ("a", "b", "c"):
        pytester.makepyfile(**{f"src/{name}": f"VALUE_{name.upper()} = 1\n"})
    first = pytester.runpytest("-p", "harness")
    first.stdout.fnmatch_lines(["scan: 3 file(s), 0 finding(s)*0 of 3 from cache*"])
    (pytester.path / "src/b.py").write_text("VALUE_B = 2\n", encoding="utf-8")
    second = pytester.runpytest("-p", "harness")
    second.stdout.fnmatch_lines(["scan: 3 file(s), 0 finding(s)*2 of 3 from cache*"])
    first.assert_outcomes(passed=4)
    second.assert_outcomes(passed=4)



def test_a_failure_found_by_the_state_machine_carries_the_reproduce_blob(
    pytester: pytest.Pytester,
) -> None:
    # A bug the seed scenarios (all sent by "client") do not reach: only a peer's rejected
    # posts are answered. Hypothesis finds and shrinks it, and says how to replay it.
    sample_repo.write(pytester.path, fixed=False)
    mesh = pytester.path / "src" / "tinymesh" / "mesh.py"
    text = mesh.read_text()
    bug = '        self.send(DeliveryFailure(delivery.id, "Rejected"), delivery.target)\n'
    assert bug in text
    mesh.write_text(text.replace(bug, '        if delivery.sender == "peer":\n    ' + bug))
    result = pytester.runpytest("-p", "harness", "-k", "INV1")
    result.assert_outcomes(failed=1, deselected=6)
    output = result.stdout.str()
    assert "Seed program" not in output
    assert "sender='peer'" in output
    assert "@reproduce_failure(" in output
    assert "sequenceDiagram" in output
