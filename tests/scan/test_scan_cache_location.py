"""Where the scan cache lives, and what in it is read.

- Anything but a regular file where an entry belongs (a FIFO, which a plain read would
  wait on for ever) is skipped: the file is analysed again, the scan ends.
- A scan that names no project (no pyproject.toml at or above what it scans: a directory
  of site-packages, another checkout) keeps its cache in the user's cache directory,
  never in the tree it scans; the control: with a pyproject.toml, the cache is next to it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import harness
from invariants.scan.cache import user_cache_dir

WORKTREE = Path(harness.__file__).resolve().parents[1]


def _scan(cwd: Path, *argv: str, cache_home: Path) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_")}
    env["PYTHONPATH"] = str(WORKTREE)
    env["XDG_CACHE_HOME"] = str(cache_home)
    done = subprocess.run([sys.executable, "-m", "harness", "scan", "--format", "json", *argv],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    stats = json.loads(done.stdout)["stats"]
    assert isinstance(stats, dict)
    return stats


def _project(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "pyproject.toml").write_text("[tool.harness]\npaths = ['src']\n")
    (repo / "src" / "a.py").write_text("VALUE = 1\n")
    return repo


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
@pytest.mark.parametrize("where", ["entry", "gitignore"])
def test_a_fifo_in_the_cache_is_skipped_not_waited_on(tmp_path: Path, where: str) -> None:
    repo = _project(tmp_path)
    assert _scan(repo, cache_home=tmp_path)["cached"] == 0
    cache = repo / ".harness-cache"
    (entry,) = cache.rglob("*.json")
    target = entry if where == "entry" else cache / ".gitignore"
    target.unlink()
    os.mkfifo(target)
    # Before: the read of the FIFO never returned (the subprocess timed out).
    stats = _scan(repo, cache_home=tmp_path)
    assert stats["files"] == 1
    assert stats["cached"] == (0 if where == "entry" else 1)


def test_a_tree_without_a_project_is_not_written_into(tmp_path: Path) -> None:
    elsewhere = tmp_path / "site-packages" / "somepkg"
    elsewhere.mkdir(parents=True)
    (elsewhere / "mod.py").write_text("VALUE = 1\n")
    here = _project(tmp_path)  # the working directory: a project, not the one scanned
    cache_home = tmp_path / "cache-home"
    assert _scan(here, str(elsewhere), cache_home=cache_home)["cached"] == 0
    assert _scan(here, str(elsewhere), cache_home=cache_home)["cached"] == 1
    assert not list((tmp_path / "site-packages").rglob(".harness-cache"))
    assert list((cache_home / "mesh-harness" / "scan").rglob("*.json"))


def test_control_a_project_keeps_its_cache_next_to_its_pyproject(tmp_path: Path) -> None:
    repo = _project(tmp_path)
    cache_home = tmp_path / "cache-home"
    assert _scan(repo, cache_home=cache_home)["cached"] == 0
    assert list((repo / ".harness-cache").rglob("*.json"))
    assert not cache_home.exists()


def test_the_user_cache_directory_follows_xdg(tmp_path: Path) -> None:
    if sys.platform in ("win32", "darwin"):
        pytest.skip("XDG_CACHE_HOME is read on other platforms")
    assert user_cache_dir({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "mesh-harness" / "scan"
    # A relative XDG_CACHE_HOME is ignored, as the specification says.
    assert user_cache_dir({"XDG_CACHE_HOME": "rel"}) == Path.home() / ".cache/mesh-harness/scan"
