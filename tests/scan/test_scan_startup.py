"""Start-up of the scan entry point: `python -m harness scan` imports only what scanning
needs. Measured by module, never by time (a wall-clock threshold would be flaky)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
UNWANTED = ("libcst.codemod", "hypothesis", "invariants.mutants", "networkx")


def imported_by(args: list[str], cwd: Path) -> set[str]:
    """Every module a fresh interpreter imports running `python -X importtime *args`."""
    env = {**os.environ, "PYTHONPATH": str(REPOSITORY)}
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False,
    )
    modules = set()
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            modules.add(line.rsplit("|", 1)[1].strip())
    assert "invariants.scan.runner" in modules or "harness" in modules, done.stderr[-2000:]
    return modules


def unwanted(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in UNWANTED or m.startswith(UNWANTED))


def test_scanning_one_file_imports_no_mutant_or_fuzzing_machinery(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    modules = imported_by(["-m", "harness", "scan", "--no-cache", "a.py"], tmp_path)
    assert "libcst" in modules and "invariants.scan.rules" in modules  # it did scan
    assert unwanted(modules) == []


def test_a_file_with_an_emit_site_pays_for_the_graph_library(tmp_path: Path) -> None:
    # networkx comes in only when a control-flow graph is built (the lazy import works)
    (tmp_path / "a.py").write_text("def f(d):\n    return DeliveryFailure(d)\n")
    modules = imported_by(["-m", "harness", "scan", "--no-cache", "a.py"], tmp_path)
    # (in the worker process, whose import log goes to the same stderr)
    assert "networkx" in modules


def test_the_check_sees_the_machinery_other_commands_import(tmp_path: Path) -> None:
    # negative control: the parser of every command does import it
    code = "import invariants.scan.runner; from harness.cli import build_parser; build_parser()"
    modules = imported_by(["-c", code], tmp_path)
    assert {"hypothesis", "invariants.mutants"} <= {m.split(".")[0] for m in modules} | {
        m.rsplit(".", 1)[0] for m in modules
    }
