"""The nodemesh example repository (examples/nodemesh-repo/): three nodes over TCP, run
under the harness on the simulated network, as its user runs it.

Each run is a subprocess in a fresh copy (no caches written into the source tree), with
this tree first on PYTHONPATH and the copy's `src` after it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "nodemesh-repo"


def _copy(tmp_path: Path) -> Path:
    repo = tmp_path / "nodemesh-repo"
    shutil.copytree(EXAMPLE, repo, ignore=shutil.ignore_patterns(
        "__pycache__", ".pytest_cache", ".hypothesis", ".harness-cache", ".benchmarks"))
    return repo


def _run(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST_", "HARNESS_")) and k != "CI"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(repo / "src")])
    return subprocess.run([sys.executable, "-m", *args], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=900, check=False)


def test_its_adapter_conforms_on_the_simulated_network(tmp_path: Path) -> None:
    done = _run(_copy(tmp_path), "harness", "adapter-check")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "conforms: 9 program(s), 0 broken convention(s)" in done.stdout


@pytest.mark.slow
def test_the_clean_mesh_passes_check_with_every_obligation_accounted_for(
        tmp_path: Path) -> None:
    import json

    done = _run(_copy(tmp_path), "harness", "check", "--format", "json", "--quiet")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads(done.stdout)
    verdicts = {row["check"]: row["verdict"] for row in report["invariants"]}
    assert verdicts == {"INV1": "pass", "INV2": "not applicable", "INV3": "pass",
                        "INV4": "pass", "INV5": "pass", "INV6": "pass", "INV7": "pass"}
    unaccounted = [(row["check"], o["obligation"]) for row in report["invariants"]
                   if row["verdict"] == "pass" for o in row["obligations"]
                   if not o.get("exercised") and not o.get("not_applicable")]
    assert unaccounted == []
