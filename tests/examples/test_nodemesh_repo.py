"""The nodemesh example repository (examples/nodemesh-repo/): three nodes over TCP, run
under the harness on the simulated network, as its user runs it.

Each run is a subprocess in a fresh copy (`example_repos`).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from example_repos import copy_example, run_in

REPO = "nodemesh-repo"


def test_its_adapter_conforms_on_the_simulated_network(tmp_path: Path) -> None:
    done = run_in(copy_example(REPO, tmp_path), "harness", "adapter-check")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "conforms: 9 program(s), 0 broken convention(s)" in done.stdout


@pytest.mark.slow
def test_the_clean_mesh_passes_check_with_every_obligation_accounted_for(
        tmp_path: Path) -> None:
    import json

    done = run_in(copy_example(REPO, tmp_path), "harness", "check", "--format", "json", "--quiet")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads(done.stdout)
    verdicts = {row["check"]: row["verdict"] for row in report["invariants"]}
    assert verdicts == {"INV1": "pass", "INV2": "not applicable", "INV3": "pass",
                        "INV4": "pass", "INV5": "pass", "INV6": "pass", "INV7": "pass"}
    unaccounted = [(row["check"], o["obligation"]) for row in report["invariants"]
                   if row["verdict"] == "pass" for o in row["obligations"]
                   if not o.get("exercised") and not o.get("not_applicable")]
    assert unaccounted == []
