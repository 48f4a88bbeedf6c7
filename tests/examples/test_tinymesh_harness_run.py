"""`pytest -p harness` in a copy of the tinymesh example: scan and every applicable
invariant pass (INV4, about grain calls, is skipped as not applicable, and the terminal
summary says so rather than counting it passed or failed), and the example's own tests run
beside them.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path

import pytest
import tinymesh_repo

APPLICABLE = ("INV1", "INV2", "INV3", "INV5", "INV6", "INV7")


@pytest.mark.slow
def test_every_applicable_invariant_passes_on_the_example(tmp_path: Path) -> None:
    repo = tinymesh_repo.copy_to(tmp_path)
    result = tinymesh_repo.pytest_harness(repo, "-v")
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    for check in APPLICABLE:
        assert f"harness::{check}[tinymesh.harness_adapter:make] PASSED" in out
    assert "harness::INV4[tinymesh.harness_adapter:make] SKIPPED" in out
    assert "tests/test_tinymesh.py::test_a_routed_letter_is_served PASSED" in out
    summary = [line for line in out.splitlines() if line.startswith(("scan:", "invariants on"))]
    assert fnmatch.fnmatch(summary[0], "scan: 12 file(s), 0 finding(s); 2 suppressed, *")
    assert summary[1] == (
        "invariants on tinymesh.harness_adapter:make: 6 passed, 0 failed, "
        "1 not applicable (INV4)"
    )
