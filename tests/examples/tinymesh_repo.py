"""The tinymesh example repository, copied to a temporary directory and run there.

Every run is a subprocess in the copy, as a user of that repository would run it, with
this source tree first on PYTHONPATH (the installed mesh-harness may be another tree's)
and the copy's `src` after it: what `pip install -e .` of the repository gives its user
(`pytest` finds `src` through its `pythonpath` ini key, `python -m harness` does not).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "tinymesh-repo"
_LEFT_OUT = shutil.ignore_patterns(".harness-cache", "__pycache__", ".pytest_cache",
                                   ".hypothesis", "build")


@dataclass(frozen=True)
class Run:
    returncode: int
    stdout: str
    stderr: str


def copy_to(directory: Path) -> Path:
    """A fresh copy of the example repository (no caches) at `directory / "tinymesh-repo"`."""
    repo = directory / "tinymesh-repo"
    shutil.copytree(EXAMPLE, repo, ignore=_LEFT_OUT)
    return repo


def patch(repo: Path, relative: str, edits: Iterable[tuple[str, str]]) -> None:
    """Apply (old, new) edits to one file; each old text must occur exactly once."""
    path = repo / relative
    text = path.read_text(encoding="utf-8")
    for old, new in edits:
        if text.count(old) != 1:
            raise AssertionError(f"{relative}: {old!r} occurs {text.count(old)} times")
        text = text.replace(old, new)
    path.write_text(text, encoding="utf-8")


def run(repo: Path, *args: str) -> Run:
    """`python -m <args>` in the repository, as its own user would run it."""
    # A user's terminal, not CI's: where `CI` is set pytest prints its short summary in full
    # (the guide shows the terminal's truncated lines) and Hypothesis loads its ci profile.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST_", "HARNESS_")) and k not in ("CI", "BUILD_NUMBER")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(repo / "src")])
    env["COLUMNS"] = "100"  # pytest's rule lines are as wide as the terminal
    done = subprocess.run([sys.executable, "-m", *args], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=900, check=False)
    return Run(done.returncode, done.stdout, done.stderr)


def pytest_harness(repo: Path, *args: str) -> Run:
    return run(repo, "pytest", "-p", "harness", "-p", "no:cacheprovider", *args)


# pytest adds " (H:MM:SS)" to its duration past a minute, which a loaded machine reaches.
_SECONDS = re.compile(r"\bin \d+(\.\d+)?s\b( \(\d+:\d\d:\d\d\))?")
_ROW_SECONDS = re.compile(r"\b\d+\.\d s$", re.MULTILINE)  # a row of `harness check`


def normalise(text: str, repo: Path) -> str:
    """Paths of the copy and run times out of an output, so it can be compared."""
    text = _SECONDS.sub("in N.NNs", text.replace(str(repo), "/home/me/tinymesh-repo"))
    return _ROW_SECONDS.sub("N.N s", text)
