"""The scan imports the team's rule modules, never the code it scans: a scanned module that
leaves a mark and exits when imported is read, flagged and left unimported, by the library
and by `python -m harness scan` with the scanned tree on the import path. The control
imports it, and the mark appears."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from team_rule_repo import Repo, forget_modules, make_repo

from invariants.scan.config import load_config
from invariants.scan.runner import scan

__all__ = ["forget_modules"]
ROOT = Path(__file__).resolve().parents[2]
BOMB = (
    "import pathlib\n"
    "pathlib.Path(__file__).with_name('IMPORTED').write_text('imported')\n"
    "raise SystemExit(99)\n"
    "forbidden()\n"
)


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    repo = make_repo(tmp_path)
    package = tmp_path / "src" / "meshpkg"
    package.mkdir()
    (package / "__init__.py").write_text(BOMB, encoding="utf-8")
    (package / "bomb.py").write_text(BOMB, encoding="utf-8")
    extra = '[tool.pytest.ini_options]\npythonpath = ["src"]\n'  # the tree is importable
    repo.configure(repo.spec(), extra=extra)
    return repo


def _marks(repo: Repo) -> list[Path]:
    return sorted(repo.root.rglob("IMPORTED"))


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HARNESS_"))}
    env["PYTHONPATH"] = str(ROOT)
    return env


@pytest.mark.usefixtures("forget_modules")
def test_the_library_scan_reads_the_bomb_without_importing_it(repo: Repo) -> None:
    result = scan(["src"], load_config(repo.pyproject), root=repo.root, cache_dir=None)
    assert sorted({f.path for f in result.findings if f.rule == "TST001"}) == [
        "src/mesh.py", "src/meshpkg/__init__.py", "src/meshpkg/bomb.py"]
    assert _marks(repo) == []
    assert "meshpkg" not in sys.modules


def test_the_command_reads_the_bomb_without_importing_it(repo: Repo) -> None:
    done = subprocess.run([sys.executable, "-m", "harness", "scan", "--no-cache"],
                          cwd=repo.root, env=_env(), capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "src/meshpkg/bomb.py:4:1 TST001 forbidden() is forbidden here" in done.stdout
    assert _marks(repo) == []


def test_the_control_importing_the_bomb_leaves_the_mark(repo: Repo) -> None:
    done = subprocess.run([sys.executable, "-c", "import meshpkg.bomb"],
                          cwd=repo.root / "src", env=_env(), capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 99
    assert _marks(repo) == [repo.root / "src" / "meshpkg" / "IMPORTED"]
