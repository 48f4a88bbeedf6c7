"""An example repository under examples/, copied to a temporary directory and run there
as its user runs it: a subprocess in the copy (no caches written into the source tree),
with this tree first on PYTHONPATH and the copy's `src` after it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_LEFT_OUT = shutil.ignore_patterns(
    "__pycache__", ".pytest_cache", ".hypothesis", ".harness-cache", ".benchmarks")


def copy_example(name: str, tmp_path: Path) -> Path:
    """A fresh copy of examples/<name> in `tmp_path`."""
    repo = tmp_path / name
    shutil.copytree(ROOT / "examples" / name, repo, ignore=_LEFT_OUT)
    return repo


def run_in(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m <args>` in `repo`, free of this run's pytest and harness settings."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST_", "HARNESS_")) and k != "CI"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(repo / "src")])
    return subprocess.run([sys.executable, "-m", *args], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=900, check=False)
