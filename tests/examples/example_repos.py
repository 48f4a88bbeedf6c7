"""An example repository under examples/, copied to a temporary directory and run there
as its user runs it: a subprocess in the copy (no caches written into the source tree),
with this tree first on PYTHONPATH and the copy's `src` after it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
_LEFT_OUT = shutil.ignore_patterns(
    "__pycache__", ".pytest_cache", ".hypothesis", ".harness-cache", ".benchmarks")


def copy_example(name: str, tmp_path: Path, adapter: str | None = None) -> Path:
    """A fresh copy of examples/<name> in `tmp_path`; with `adapter`, its `[tool.harness]
    adapter` is that factory instead (a planted bug's, say)."""
    repo = tmp_path / name
    shutil.copytree(ROOT / "examples" / name, repo, ignore=_LEFT_OUT)
    if adapter is not None:
        pyproject = repo / "pyproject.toml"
        text = pyproject.read_text(encoding="utf-8")
        clean = next(line for line in text.splitlines() if line.startswith("adapter = "))
        assert text.count(clean) == 1
        pyproject.write_text(text.replace(clean, f'adapter = "{adapter}"'), encoding="utf-8")
    return repo


def planted(name: str) -> dict[str, dict[str, Any]]:
    """examples/<name>/PLANTED.json's records, by bug name."""
    records = json.loads((ROOT / "examples" / name / "PLANTED.json").read_text())
    return {record["name"]: record for record in records}


def run_in(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m <args>` in `repo`, free of this run's pytest and harness settings."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST_", "HARNESS_")) and k != "CI"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(repo / "src")])
    return subprocess.run([sys.executable, "-m", *args], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=900, check=False)
