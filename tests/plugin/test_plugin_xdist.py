"""Harness items under pytest-xdist and pytest-timeout: the same items, the same verdicts.

Each run lists every item's outcome (`-rA`); the distributed run (`-n 2`) must report the
same item ids with the same outcomes as the plain run, on the violating sample repo (so
failures too are compared, not only passes), and the summary must come out on the
controller, which runs no item itself, as must the SARIF file.
"""

from __future__ import annotations

import json
import re

import pytest
import sample_repo

OUTCOME = re.compile(r"^(PASSED|FAILED|ERROR) (\S+)")


def _outcomes(result: pytest.RunResult) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in result.stdout.lines:
        match = OUTCOME.match(line)
        if match:
            found[match.group(2)] = match.group(1)
    return found


@pytest.mark.slow
def test_two_workers_give_the_same_items_and_verdicts(pytester: pytest.Pytester) -> None:
    sample_repo.write(pytester.path, fixed=False)
    args = ("-p", "harness", "-rA", "-p", "timeout", "--timeout", "300")
    plain = _outcomes(pytester.runpytest(*args))
    # A subprocess: an in-process run would inherit this suite's warnings-as-errors filter,
    # which other installed plugins' xdist notices (pytest-benchmark's) trip.
    distributed = pytester.runpytest_subprocess(*args, "-n", "2", "--harness-sarif", "h.sarif")
    assert "created: 2/2 workers" in distributed.stdout.str()
    assert _outcomes(distributed) == plain
    assert plain["harness::INV1[tinymesh.adapter:make_adapter]"] == "FAILED"
    assert plain["harness::adapter-check[tinymesh.adapter:make_adapter]"] == "PASSED"
    assert plain["tests/test_tinymesh.py::test_a_post_to_a_hub_is_handled"] == "PASSED"
    assert len(plain) == 7
    # The controller, which scanned nothing for an item, still writes the run's SARIF.
    results = json.loads((pytester.path / "h.sarif").read_text())["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == ["MESH001"]
    distributed.stdout.fnmatch_lines([
        "*= mesh-harness =*",
        "scan: 3 file(s)*",
        "invariants on tinymesh.adapter:make_adapter: 0 passed, 1 failed: INV1 (violation)",
    ])
