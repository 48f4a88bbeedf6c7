"""The distribution as a user gets it: build a wheel, install it into a new virtualenv, and
run `pytest -p harness` on a sample repo from that virtualenv.

The virtualenv sees the machine's site-packages (`--system-site-packages`) so the
dependencies are not downloaded again (a plain virtualenv adds their download and install).
The wheel itself is installed into the virtualenv, and the test checks that the plugin, the
CLI and the reference mesh come from there and not from the source tree. Slow by nature (a
build and an install): one test, bounded by its timeout.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import sample_repo

PROJECT = Path(__file__).resolve().parents[2]
SOURCES = ("pyproject.toml", "README.md", "harness", "invariants", "reference_impl")


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTEST_ADDOPTS")}
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=False)


def _ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, f"{result.args}\n{result.stdout}\n{result.stderr}"
    return result.stdout


def _copy_project(target: Path) -> Path:
    """Only what the distribution is built from, so the build never writes into the tree."""
    target.mkdir()
    for name in SOURCES:
        source = PROJECT / name
        if source.is_dir():
            shutil.copytree(source, target / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(source, target / name)
    return target


@pytest.mark.timeout(600)
@pytest.mark.slow
def test_a_wheel_in_a_new_virtualenv_runs_the_plugin_on_a_sample_repo(tmp_path: Path) -> None:
    project = _copy_project(tmp_path / "project")
    wheels = tmp_path / "wheels"
    _ok(_run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(wheels),
              str(project)], tmp_path))
    (wheel,) = wheels.glob("mesh_harness-*.whl")

    venv = tmp_path / "venv"
    # No pip of its own (ensurepip is most of a venv's creation time): this pip installs into it.
    _ok(_run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)],
             tmp_path))
    python = str(venv / "bin" / "python")
    _ok(_run([sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-deps",
              "--no-index", str(wheel)], tmp_path))

    repo = sample_repo.write(tmp_path / "repo", fixed=True)
    where = _ok(_run([python, "-c", "import harness.plugin, reference_impl; "
                      "print(harness.plugin.__file__); print(reference_impl.__file__)"], repo))
    for line in where.splitlines():
        assert line.startswith(str(venv)), where
    assert "usage: mesh-harness check" in _ok(_run([str(venv / "bin" / "mesh-harness"), "check",
                                                    "--help"], repo))

    result = _run([python, "-m", "pytest", "-p", "harness", "-rA", "-p", "no:cacheprovider"], repo)
    lines = result.stdout.splitlines()
    # The wheel's entry point named the plugin, its fixture served the user's test, and the
    # tiny mesh passed INV1 through its adapter.
    assert "mesh-harness-0.1.0" in next(line for line in lines if line.startswith("plugins:"))
    assert "PASSED harness::INV1[tinymesh.adapter:make_adapter]" in lines, result.stdout
    assert "PASSED tests/test_tinymesh.py::test_a_post_to_a_hub_is_handled" in lines
    assert "PASSED src/tinymesh/adapter.py::harness-scan" in lines
    assert any(line.startswith("invariants on tinymesh.adapter:make_adapter: 1 passed")
               for line in lines)
    # Turned off, the same venv collects nothing of the harness.
    off = _run([python, "-m", "pytest", "-p", "no:harness", "--collect-only", "-q",
                "-p", "no:cacheprovider", "tests"], repo)
    assert "harness" not in off.stdout.replace("tests/test_tinymesh.py", "")
