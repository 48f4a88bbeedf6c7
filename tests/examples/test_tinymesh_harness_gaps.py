"""What the harness does not yet do for a repository like tinymesh, pinned so the day it
does is noticed (each test then fails with what to update).

- The invariant items do not read the adapter's declared capabilities: INV4 needs a grain
  router, which tinymesh declares it lacks, yet asked for, INV4 passes (it should be
  reported not applicable). Hence `invariants` in the example's [tool.harness] leaves it out.
- `python -m harness check` checks the bundled reference mesh, not the repository it runs
  in; `pytest -p harness` is the way to check tinymesh.
"""

from __future__ import annotations

from pathlib import Path

import tinymesh_repo


def test_an_undeclared_capability_still_passes_rather_than_not_applicable(
    tmp_path: Path,
) -> None:
    repo = tinymesh_repo.copy_to(tmp_path)
    result = tinymesh_repo.pytest_harness(repo, "-m", "harness", "-k", "INV4",
                                          "--harness-invariants", "INV4", "-v")
    assert "harness::INV4[tinymesh.harness_adapter:make] PASSED" in result.stdout, (
        "INV4 on a mesh without a grain router no longer passes: if it is now reported not "
        "applicable, say so in docs/adapter.md#capabilities and drop this pin\n"
        + result.stdout
    )


def test_harness_check_still_checks_the_bundled_reference(tmp_path: Path) -> None:
    repo = tinymesh_repo.copy_to(tmp_path)
    result = tinymesh_repo.run(repo, "harness", "check", "--no-prove")
    first = result.stdout.splitlines()[0]
    assert first.startswith("mesh-harness check: the bundled reference mesh"), (
        "`harness check` now checks the configured repository: walk through it in "
        "docs/adopting.md and drop this pin\n" + result.stdout
    )
