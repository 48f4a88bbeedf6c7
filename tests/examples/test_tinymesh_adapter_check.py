"""`python -m harness adapter-check` in the tinymesh example: its adapter conforms.

And the negative control: the same adapter with one convention broken (a leg that is
opened and never closed) does not, with the line naming the convention's section.
"""

from __future__ import annotations

from pathlib import Path

import tinymesh_repo


def test_the_example_adapter_conforms(tmp_path: Path) -> None:
    repo = tinymesh_repo.copy_to(tmp_path)
    result = tinymesh_repo.run(repo, "harness", "adapter-check")
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "mesh-harness adapter-check: tinymesh.harness_adapter:make"
    assert "  capabilities: breaker_threshold, stop_lifecycle, subscribe" in lines
    skipped = "grain, fault-order, zero-count, aggregate, roundtrip, raising, network"
    assert f"  not applicable (not declared): {skipped}" in lines
    assert lines[-1] == "  conforms: 6 program(s), 0 broken convention(s)"


def test_an_adapter_that_hides_a_leg_end_does_not_conform(tmp_path: Path) -> None:
    repo = tinymesh_repo.copy_to(tmp_path)
    tinymesh_repo.patch(repo, "src/tinymesh/harness_adapter.py", [(
        '    "leg_close": EventKind.LEG_ENDED,\n',
        '    "leg_close": EventKind.FAULT_INJECTED,  # mislabelled: every leg looks open\n',
    )])
    result = tinymesh_repo.run(repo, "harness", "adapter-check")
    assert result.returncode == 1
    assert "never ended, although the mesh went quiet (docs/adapter.md#legs)" in result.stdout
    assert "  does not conform: 6 program(s)," in result.stdout
